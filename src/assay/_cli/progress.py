"""The progress of an import on a terminal: a spinner counting records, and the line a
rejected record prints (the `osv`, `cve`, `kev` and `epss` imports)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

UPDATE_EVERY = 200  # records between two updates of the count (drawing costs more)


@contextmanager
def record_progress(console: Any) -> Iterator[tuple[Callable[[int], None], Callable[[str], None]]]:
    """`(on_record, on_problem)` callbacks for an importer; the spinner shows only on a
    terminal and is gone when the block ends."""
    from rich.markup import escape
    from rich.progress import Progress, SpinnerColumn, TextColumn

    with Progress(
        SpinnerColumn(),
        TextColumn("[bold]importing[/bold] {task.completed} records"),
        console=console,
        disable=not console.is_terminal,
        transient=True,
    ) as progress:
        task = progress.add_task("import", total=None)

        def on_record(count: int) -> None:
            if count % UPDATE_EVERY == 0:
                progress.update(task, completed=count)

        def on_problem(text: str) -> None:
            console.print(f"[red]rejected[/red] {escape(text)}", highlight=False)

        yield on_record, on_problem
