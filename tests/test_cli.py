"""The `sandbox` command: each subcommand's exit status and what it prints."""

from __future__ import annotations

import pygame
import pytest

from sandbox import cli
from sandbox.resources import levels_dir


def test_check_passes_a_shipped_level_and_fails_a_bad_file(tmp_path, capsys):
    assert cli.main(["check", str(levels_dir() / "pyramid.json")]) == 0
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "sandbox-level", "version": 1, "title": "x", "bodies": [{"type": "floating"}]}')
    assert cli.main(["check", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}: bodies[0].type:" in out and "floating" in out


def test_run_with_a_bad_level_exits_2_without_a_traceback(capsys):
    assert cli.main(["run", "no_such_level", "--seconds", "0.1"]) == 2
    err = capsys.readouterr().err
    assert "no_such_level" in err and "Traceback" not in err


def test_run_prints_a_summary(capsys):
    assert cli.main(["run", "disk_vs_box", "--seconds", "0.2"]) == 0
    assert "12 steps of 1/60 s" in capsys.readouterr().out


def test_tiles_writes_the_atlas_and_the_tile_set(tmp_path):
    assert cli.main(["tiles", "--out", str(tmp_path / "atlas.png")]) == 0
    assert pygame.image.load(str(tmp_path / "atlas.png")).get_size()[0] > 400
    assert cli.main(["tiles", "--tileset", "--cell", "16", "--out", str(tmp_path / "set.png")]) == 0
    assert pygame.image.load(str(tmp_path / "set.png")).get_size() == (12 * 16, 16)


def test_demo_reports_a_standing_pyramid(capsys):
    assert cli.main(["demo", "--no-ball", "--base", "3", "--seconds", "1"]) == 0
    out = capsys.readouterr().out
    assert "pyramid of base 3 (6 boxes)" in out and "top box still on top: True" in out


def test_a_level_name_opens_the_window(monkeypatch):
    opened = []
    monkeypatch.setattr("sandbox.game.app.run_window", lambda level=None: opened.append(level) or 0)
    assert cli.main(["pyramid"]) == 0
    assert cli.main([]) == 0
    assert opened == ["pyramid", None]


def test_extra_words_after_a_level_are_an_error(capsys):
    with pytest.raises(SystemExit):
        cli.main(["demo", "--base", "0"])
    assert cli.main(["pyramid", "extra"]) == 2


def test_check_of_the_levels_folder_skips_the_schema(capsys):
    files = sorted(str(p) for p in levels_dir().glob("*.json"))
    assert cli.main(["check", *files]) == 0
    out = capsys.readouterr().out
    assert "level.schema.json: skipped (a JSON Schema, not a level)" in out
    assert f"checked {len(files) - 1} files: {len(files) - 1} ok, 0 bad" in out
