"""Progress is drawn on a terminal and nowhere else."""

import io

from onlineeval.progress import Progress, track


def test_progress_counts_on_a_terminal(tty_stderr):
    tty = tty_stderr()
    assert list(track(range(3), "work")) == [0, 1, 2]
    assert tty.text.endswith("\rwork: 3/3\n")


def test_progress_is_silent_off_a_terminal():
    out = io.StringIO()
    with Progress("work", total=5, stream=out) as bar:
        for _ in range(5):
            bar.update()
    assert bar.done == 5 and out.getvalue() == ""


def test_progress_without_a_total_shows_the_count_only(tty_stderr):
    tty = tty_stderr()
    with Progress("rows") as bar:
        bar.update(7)
    assert "\rrows: 7" in tty.text and "/" not in tty.text
