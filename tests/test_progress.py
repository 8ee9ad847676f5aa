"""Progress is drawn on a terminal and nowhere else."""

import io
from pathlib import Path

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


def test_elapsed_draws_on_a_terminal_only_when_the_block_is_long(tty_stderr) -> None:
    import time

    from onlineeval.progress import Elapsed

    tty = tty_stderr()
    with Elapsed("quick", interval_s=0.5):
        pass
    assert tty.text == ""  # a block shorter than the interval leaves no trace
    with Elapsed("long step", interval_s=0.05):
        time.sleep(0.3)
    lines = tty.text.split("\r")
    assert lines[1].startswith("long step: ") and lines[1].endswith("s")
    assert tty.text.endswith("\n") and lines[-1].startswith("long step: done in ")


def test_elapsed_is_quiet_off_a_terminal(capsys) -> None:
    import time

    from onlineeval.progress import Elapsed

    with Elapsed("long step", interval_s=0.05):
        time.sleep(0.2)
    assert capsys.readouterr().err == ""


def test_online_metrics_show_elapsed_time_on_a_terminal(tty_stderr, monkeypatch) -> None:
    import onlineeval.progress as progress
    from onlineeval import load_logs
    from onlineeval.online import online_metrics

    logs = load_logs(Path(__file__).resolve().parents[1] / "sample_logs" / "ab")
    seen = []
    real = progress.Elapsed

    class Spy(real):
        def __init__(self, label, *a, **k):
            seen.append(label)
            super().__init__(label, *a, **k)

    monkeypatch.setattr("onlineeval.online.metrics.Elapsed", Spy)
    tty_stderr()
    online_metrics(logs, by=("variant",))
    assert seen == ["computing online metrics"]
