"""The tables docs/rules.md shows of where each release's facts were read: one row per fact with its
file in the pinned release and where other releases keep it, one row per release with its wheel.
tests/test_rules_doc.py keeps the page equal to them; these hold what the rows say."""

from __future__ import annotations

from vllm_serving.engine.release_sources import PINNED, _cell, releases_table, sources_table


def _rows(table: str) -> list[list[str]]:
    # a cell may hold an escaped pipe (`\|`): split on the unescaped ones only
    return [[cell.strip() for cell in line.replace("\\|", "\0").strip("|").split("|")]
            for line in table.splitlines()[2:]]


def test_each_release_row_names_the_wheel_it_was_read_from() -> None:
    rows = {row[0]: row for row in _rows(releases_table())}
    # sha256 of the wheel on PyPI (`pip download vllm==0.19.1 --no-deps`, then sha256sum)
    assert rows["v0.19.1"][:3] == ["v0.19.1", "vllm-0.19.1-cp38-abi3-manylinux_2_31_x86_64.whl",
                                   "`71a87f46cafab448...`"]
    assert rows["v0.21.0"][1] == "vllm-0.21.0-1-cp38-abi3-manylinux_2_24_x86_64.whl"  # a build-numbered wheel
    assert all(row[3] == "2" and row[4].isdigit() for row in rows.values())  # schema, facts not read
    assert list(rows)[0] == "v0.10.2" and PINNED == "0.19.1"


def test_each_fact_names_its_file_in_the_pinned_release_and_where_older_releases_kept_it() -> None:
    rows = {row[0]: row for row in _rows(sources_table())}
    # FlexibleArgumentParser moved from vllm/utils/__init__.py to vllm/utils/argparse_utils.py
    assert rows["argv rewriting (FlexibleArgumentParser)"][1:] == [
        "vllm/utils/argparse_utils.py", "v0.10.2, v0.11.0: vllm/utils/__init__.py"]
    # v0.10/v0.11 choose no backend in a priority list: the fact is absent there, and said so
    assert rows["backend auto-selection order (CUDA)"][1:] == [
        "vllm/platforms/cuda.py _get_backend_priorities", "v0.10.2, v0.11.0: none in this release's registry"]
    # the same file in every release: no "elsewhere"
    assert rows["Marlin's CC and group sizes (AWQ/GPTQ upgrade)"][1:] == [
        "vllm/model_executor/layers/quantization/utils/marlin_utils.py", "-"]
    assert "vllm/engine/arg_utils.py" in rows["`vllm serve` flags, choices, types"][1]
    assert len(rows) == 15


def test_a_cell_keeps_the_table_whole() -> None:
    # a source naming a '|' would split the Markdown row: it is escaped; a missing one is said
    assert _cell("a.py | b.py") == "a.py \\| b.py"
    assert _cell(None) == _cell("") == "none in this release's registry"
