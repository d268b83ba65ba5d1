"""memory_search tool payloads found by shape inside transcript lines (RW07/RW11/RW12 kinds)."""

import json

from clawprobe.core.probes.tool_results import parse_lines


def _line(payload, nested_as_string=False, ts="2026-11-30T01:00:00Z"):
    content = json.dumps(payload) if nested_as_string else payload
    return json.dumps({"type": "message", "timestamp": ts,
                       "message": {"role": "toolResult", "toolName": "memory_search", "content": [{"type": "text", "text": content}]}})


def test_fallback_fields_and_builtin_shape_are_read():
    payload = {"results": [{"id": "ab12", "path": "memory/x.md", "textScore": 0.4, "score": 0.6}],
               "provider": "none", "fallback": {"from": "qmd", "reason": "spawn EINVAL"}}
    (tr,) = parse_lines([_line(payload, nested_as_string=True)])
    assert (tr.fallback_from, tr.fallback_reason, tr.result_shape, tr.hits) == ("qmd", "spawn EINVAL", "builtin", 1)
    assert tr.at.isoformat() == "2026-11-30T01:00:00+00:00"


def test_qmd_shape_and_debug_backend():
    payload = {"results": [{"path": "MEMORY.md", "snippet": "@@ -2,3 @@\nx", "score": 0}],
               "debug": {"backend": "qmd", "configuredMode": "search", "searchMs": 180}}
    (tr,) = parse_lines([_line(payload)])
    assert (tr.backend, tr.result_shape, tr.search_ms) == ("qmd", "qmd", 180.0)


def test_disabled_builtin_provider_error_is_recognised():
    payload = {"results": [], "disabled": True, "unavailable": True,
               "error": "No API key found for provider openai; gemini; voyage"}
    (tr,) = parse_lines([_line(payload)])
    assert tr.disabled and tr.builtin_provider_error and tr.result_shape is None


def test_garbage_and_unrelated_lines_are_skipped():
    lines = ["", "not json {", json.dumps({"type": "message", "results": "nope"}), "[" * 5000,
             json.dumps({"message": {"content": "hello"}})]
    assert parse_lines(lines) == []
