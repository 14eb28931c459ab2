"""Real NVD sample data bundled with assay (see SOURCES.md)."""
