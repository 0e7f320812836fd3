"""The commit-msg hook (`make hooks`): a subject of at most 72 characters, a blank line before the body."""
from __future__ import annotations

import os
import subprocess

import pytest

HOOK = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".githooks", "commit-msg")


@pytest.mark.parametrize("message, refusal", [
    ("Stream an ANALYZE's partitions to the metastore\n\nThe story.\n", None),
    ("x" * 72 + "\n", None),
    ("é" * 72 + "\n", None),  # characters, not bytes
    ("# a comment git strips\nShort subject\n", None),
    ("x" * 73 + "\n", "the subject is 73 characters"),
    ("Subject\nno blank line before the body\n", "leave a blank line"),
    ("\n\nbody only\n", "the subject is empty"),
])
def test_the_hook_takes_a_readable_message_and_refuses_others_in_one_line(tmp_path, message, refusal):
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message, encoding="utf-8")
    done = subprocess.run(["sh", HOOK, str(path)], capture_output=True, text=True,
                          env={**os.environ, "LC_ALL": "C.UTF-8"})
    assert (done.returncode == 0) == (refusal is None), done.stderr
    if refusal is not None:
        assert refusal in done.stderr and done.stderr.count("\n") == 1, done.stderr
