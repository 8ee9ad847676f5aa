"""docs/reference/offline-measures.md is what the measure registry generates, and complete."""

from __future__ import annotations

import re
from pathlib import Path

from onlineeval.offline.measures import MEASURES
from onlineeval.offline.measures.docs import reference_page
from onlineeval.offline.measures.names import parse_measure

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "offline-measures.md"


def test_committed_page_is_what_the_registry_generates():
    committed = PAGE.read_text(encoding="utf-8")
    assert committed == reference_page(), (
        "docs/reference/offline-measures.md is stale; regenerate it with\n"
        "  python -m onlineeval.offline.measures.docs > docs/reference/offline-measures.md")


def test_every_measure_has_a_section_with_every_field():
    page = reference_page()
    sections = re.split(r"\n### ", page)[1:]
    titles = [s.split(" — ", 1)[0] for s in sections]
    for _, measure in MEASURES.items():
        heading = measure.value_stem if measure.params == "at" else measure.name
        assert heading in titles, measure.name
        body = sections[titles.index(heading)]
        for label in ("Written", "Parameters", "Per query", "Edge cases", "Summary", "Source",
                      "Matches"):
            assert f"- **{label}:** " in body, (measure.name, label)
        for field in ("title", "formula", "edge_cases", "citation", "matches"):
            assert getattr(measure, field).strip(), (measure.name, field)
    assert "rbo" in titles


def test_every_written_form_on_the_page_parses():
    # each code span in a "Written" line (but the rbo call) is a name evaluate() accepts,
    # and resolves to the measure of its section
    page = reference_page()
    for section in re.split(r"\n### ", page)[1:]:
        heading = section.split(" — ", 1)[0]
        if heading == "rbo":
            continue
        written = next(line for line in section.splitlines() if line.startswith("- **Written"))
        expected = parse_measure(written.split("`")[1]).measure
        for form in re.findall(r"`([^`]+)`", written):
            assert parse_measure(form).measure is expected, (heading, form)
