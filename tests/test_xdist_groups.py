"""The expensive shared fixtures (the sample study's report, the Spark session) are set up once
per run: tests/conftest.py puts every test that uses one in that fixture's xdist_group, and
under ``--dist loadgroup`` pytest-xdist must then send the whole group to one worker.

That last step broke silently once (pytest 9.2 moved the test id that pytest-xdist 3.8
renames to name the group), every group was spread over all workers and each built the
sample study and started a JVM; the run still passed, only slower. This test checks the
renaming on the collected tests themselves, so it costs nothing and sets up nothing.
"""

from __future__ import annotations

import pytest


def _group(item: pytest.Item) -> str | None:
    marks = list(item.iter_markers("xdist_group"))
    return marks[0].args[0] if marks else None


def test_users_of_a_shared_fixture_are_in_its_group(request: pytest.FixtureRequest,
                                                     shared_fixture_groups: dict) -> None:
    seen = set()
    for item in request.session.items:
        used = set(getattr(item, "fixturenames", ()))
        for group, fixtures in shared_fixture_groups.items():
            if fixtures & used:
                assert _group(item) == group, item.nodeid
                seen.add(group)
                break
    # running a single file collects no user of the groups: nothing to check then
    if len(request.session.items) > 1000:
        assert seen == set(shared_fixture_groups)


@pytest.mark.xdist_group("probe")
def test_groups_reach_the_xdist_scheduler(request: pytest.FixtureRequest) -> None:
    """Under ``--dist loadgroup`` the scheduler reads the group from the test id's suffix
    (this test is in a group of its own, so there is always one to check)."""
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not a pytest-xdist worker running --dist loadgroup")
    grouped = [item for item in request.session.items if _group(item)]
    assert request.node in grouped
    for item in grouped:
        assert item.nodeid.endswith("@" + _group(item)), (
            f"{item.nodeid}: pytest-xdist did not append its group to the test id; with this "
            "pytest / pytest-xdist pair --dist loadgroup spreads the group over all workers")
