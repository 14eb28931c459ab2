"""Import NVD data files into a store: readers for every supported format, and batching."""
