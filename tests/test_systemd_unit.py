"""systemd unit reading (systemd.syntax(7), systemd.unit(5)): continuations, sections, drop-in precedence."""

from __future__ import annotations

import os

from clawprobe.core.probes import gateway as gw
from clawprobe.core.probes.service_runtime import env_wrapper
from clawprobe.core.probes.systemd_unit import assignments, dropin_dirs, service_settings


def test_a_continued_line_is_one_setting_and_a_comment_inside_it_is_skipped():
    text = "[Unit]\nEnvironment=NOT=service\n[Service]\nEnvironment=\"A=1\" \\\n# note\n  \"B=2 3\"\nUser=ops\n"
    assert assignments(text) == [("Environment", '"A=1"  "B=2 3"'), ("User", "ops")]


def test_dropin_dirs_most_specific_first_then_prefixes_template_and_type():
    names = [p.name for p in dropin_dirs("openclaw-gateway@work.service", ["/a"])]
    assert names == ["openclaw-gateway@work.service.d", "openclaw-gateway@.service.d", "openclaw-.service.d",
                     "service.d"]


def test_an_equally_named_dropin_further_down_the_prefix_hierarchy_wins_and_all_apply_in_name_order(tmp_path):
    unit = tmp_path / "openclaw-gateway.service"
    unit.write_text("[Service]\nEnvironment=PATH=/unit\n")
    for rel, text in {"openclaw-.service.d/10-path.conf": "Environment=PATH=/prefix\n",
                      "openclaw-gateway.service.d/10-path.conf": "Environment=PATH=/exact\n",
                      "service.d/20-late.conf": "[Service]\nEnvironment=LATE=1\n",
                      "openclaw-.service.d/05-early.conf": "[Service]\nEnvironment=PATH=/early\n"}.items():
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert [v for k, v in service_settings(unit) if k == "Environment"] == \
        ["PATH=/unit", "PATH=/early", "PATH=/exact", "LATE=1"]
    os.symlink("/dev/null", tmp_path / "service.d" / "30-mask.conf")  # a mask: nothing, and no error
    assert gw.unit_env(unit) == {"PATH": "/exact", "LATE": "1"}


def test_an_empty_environmentfile_resets_the_list(tmp_path):
    (tmp_path / "a.env").write_text("PATH=/from-file\n")
    unit = tmp_path / "openclaw-gateway.service"
    unit.write_text(f"[Service]\nEnvironmentFile={tmp_path}/a.env\nEnvironmentFile=\nEnvironment=PATH=/usr/bin\n")
    assert gw.unit_env(unit) == {"PATH": "/usr/bin"}


def test_env_wrapper_assignments_and_what_it_does_not_know():
    assert env_wrapper(["/usr/bin/env", "PATH=/usr/bin", "X=a=b", "oc", "gateway"]) == \
        ({"PATH": "/usr/bin", "X": "a=b"}, False, ["oc", "gateway"])
    assert env_wrapper(["env", "-i", "HOME=/h", "oc"]) == ({"HOME": "/h"}, True, ["oc"])
    assert env_wrapper(["env", "-u", "PATH", "oc"])[2] == ["env", "-u", "PATH", "oc"]  # not understood: as it is
    assert env_wrapper(["/usr/bin/nice", "oc"]) == ({}, False, ["/usr/bin/nice", "oc"])
    assert env_wrapper(["env", "A=1"]) == ({}, False, ["env", "A=1"])  # no program: env prints, starts nothing
