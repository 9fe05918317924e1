"""Secrets in command lines are masked before any output."""

from __future__ import annotations

import json
import shlex

import pytest

from app.core.redact import MASK, MAX_COMMAND_CHARS, command_line, redact_argv


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["app", "--password=hunter2"], ["app", f"--password={MASK}"]),
        (["app", "--password", "hunter2", "x"], ["app", "--password", MASK, "x"]),
        (["app", "--token", "abc"], ["app", "--token", MASK]),
        (["app", "--db-password=p"], ["app", f"--db-password={MASK}"]),
        (["app", "--api-key", "k"], ["app", "--api-key", MASK]),
        (["env", "AWS_SECRET_ACCESS_KEY=abc", "HF_TOKEN=hf_x", "PASSWORD=p"],
         ["env", f"AWS_SECRET_ACCESS_KEY={MASK}", f"HF_TOKEN={MASK}", f"PASSWORD={MASK}"]),
        (["curl", "-H", "Authorization: Bearer eyJhbGciOi"], ["curl", "-H", f"Authorization: Bearer {MASK}"]),
        (["psql", "postgres://alice:s3cr3t@db:5432/x"], ["psql", f"postgres://alice:{MASK}@db:5432/x"]),
        (["vllm", "serve", "--max-tokens", "100", "--keyboard", "us"],
         ["vllm", "serve", "--max-tokens", "100", "--keyboard", "us"]),
        (["python", "train.py", "--lr=0.1"], ["python", "train.py", "--lr=0.1"]),
    ],
)
def test_redact_argv(argv: list[str], expected: list[str]) -> None:
    assert redact_argv(argv) == expected


def test_command_line_quotes_and_masks() -> None:
    line = command_line(["python", "-c", "print('hi there')", "--token=abc"])
    assert "abc" not in line and "--token=****" in line and "'print('\"'\"'hi there'\"'\"')'" in line


# -- masking by shape: commands generated from the shapes of secrets, with secrets nobody listed ----------------
import string  # noqa: E402

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from app.core.redact import Redactor  # noqa: E402

SECRETS = st.builds(lambda body: f"Zq{body}", st.text(string.ascii_letters + string.digits + "._-", min_size=8,
                                                      max_size=24))
SECRET_WORDS = ["PASSWORD", "TOKEN", "SECRET", "KEY", "PAT", "CREDENTIALS", "API_KEY", "PASSWD", "AUTH"]
PREFIXES = ["", "PG", "SSH", "DB_", "MY_", "GITHUB_", "AWS_SECRET_ACCESS_", "HF_", "OPENAI_"]
FLAG_NAMES = ["password", "db-password", "accessToken", "api-key", "authToken", "client-secret", "token",
              "apiKey", "refresh_token", "passphrase", "pat", "session-cookie"]
HEADERS = ["X-Api-Key", "Authorization", "X-Auth-Token", "Cookie", "Proxy-Authorization", "X-Vault-Token"]
PARAMS = ["token", "api_key", "access_token", "apiKey", "sig", "password", "client_secret"]
JSON_KEYS = ["password", "token", "api_key", "secret", "clientSecret", "auth_token", "passwd"]
WRAPPERS: list[list[str]] = [
    [], ["sudo"], ["sudo", "-u", "db"], ["nohup"], ["timeout", "10"], ["timeout", "-s", "KILL", "5m"],
    ["env", "LANG=C"], ["env", "-i", "A=B"], ["nice"], ["nice", "-n", "10"], ["ionice", "-c", "3"],
    ["stdbuf", "-oL"], ["taskset", "-c", "0-3"], ["numactl", "--interleave=all"], ["doas"], ["setsid"],
    ["chrt", "-f", "10"], ["xargs"], ["/usr/bin/nohup"],
]


@st.composite
def secret_argv(draw: st.DrawFn) -> tuple[list[str], str]:
    """One command that carries ``secret`` in one of the shapes the redactor knows (argv, secret)."""
    secret = draw(SECRETS)
    word = draw(st.sampled_from(SECRET_WORDS))
    prefix = draw(st.sampled_from(PREFIXES))
    glue = "_" if prefix and not prefix.endswith("_") and word in ("PAT", "AUTH", "API_KEY") else ""
    name = prefix + glue + word  # PAT and AUTH count as whole words only (PGPASSWORD, SSHKEY, GITHUB_PAT)
    flag = draw(st.sampled_from(FLAG_NAMES))
    shape = draw(st.sampled_from([
        ["env", f"{name}={secret}", "python", "job.py"],
        ["python", "serve.py", f"--{flag}={secret}"],
        ["python", "serve.py", f"--{flag}", secret, "--port", "80"],
        ["tool", f"--{flag}:{secret}"],
        ["mysql", "-h", "db", f"-p{secret}", "shop"],
        ["curl", "-u", f"bob:{secret}", "https://example.org/"],
        ["curl", f"--user=bob:{secret}", "https://example.org/"],
        ["sshpass", "-p", secret, "ssh", "host"],
        ["redis-cli", "-a", secret, "ping"],
        ["worker", f"{draw(st.sampled_from(['redis', 'postgres', 'amqp', 'https']))}://"
                   f"{draw(st.sampled_from(['', 'bob', 'svc.acct']))}:{secret}@db.internal:6379/0"],
        ["curl", f"https://api.example.org/v1/x?a=1&{draw(st.sampled_from(PARAMS))}={secret}&b=2"],
        ["curl", "-H", f"{draw(st.sampled_from(HEADERS))}: {secret}", "https://example.org/"],
        ["curl", "-H", f"Authorization: Bearer {secret}", "https://example.org/"],
        # structured text in one argument, a token as a URL's user, setters
        ["node", "server.js", json.dumps({draw(st.sampled_from(JSON_KEYS)): secret, "port": 80})],
        ["app", "--config", json.dumps({"db": {draw(st.sampled_from(JSON_KEYS)): secret}})],
        ["app", "--settings", f"{draw(st.sampled_from(JSON_KEYS))}: {secret}"],
        ["git", "clone", f"https://{secret}@github.com/x/y"],
        ["aws", "configure", "set", "aws_secret_access_key", secret],
        ["git", "config", "--global", "user.password", secret],
    ]))
    wrapper = draw(st.sampled_from(WRAPPERS))
    if wrapper:  # the program behind a wrapper (or two)
        shape = [*wrapper, *shape]
        if draw(st.booleans()):
            shape = [*draw(st.sampled_from([w for w in WRAPPERS if w])), *shape]
    if draw(st.booleans()):  # the same, inside one quoted argument
        shape = [*draw(st.sampled_from([["bash", "-c"], ["sh", "-c"]])), shlex.join(shape)]
    return shape, secret


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(case=secret_argv())
def test_no_secret_of_a_known_shape_survives(case: tuple[list[str], str]) -> None:
    argv, secret = case
    shown = Redactor().command(argv)
    assert shown is not None and secret not in shown, (argv, shown)
    assert argv[0] in shown  # the command itself stays readable


@pytest.mark.parametrize(("argv", "shown"), [
    (["nohup", "sshpass", "-p", "pw123", "ssh", "h"], "nohup sshpass -p **** ssh h"),
    (["timeout", "10", "curl", "-u", "bob:pw123", "http://x"], "timeout 10 curl -u bob:**** http://x"),
    (["sudo", "mysql", "-pSECRET123", "db"], "sudo mysql -p**** db"),
    (["node", "server.js", '{"password": "pw123"}'], """node server.js '{"password": "****"}'"""),
    (["app", "--config", '{"token": "SECRET123"}'], """app --config '{"token": "****"}'"""),
    (["git", "clone", "https://ghp_SECRET123@github.com/x/y"], "git clone https://****@github.com/x/y"),
    (["aws", "configure", "set", "aws_secret_access_key", "SECRET123"],
     "aws configure set aws_secret_access_key ****"),
    (["git", "clone", "ssh://git@github.com/x/y"], "git clone ssh://git@github.com/x/y"),  # a login, kept
    (["app", "--config", '{"port": 80, "mode": "fast"}'], """app --config '{"port": 80, "mode": "fast"}'"""),
])
def test_wrapped_and_structured_secrets(argv: list[str], shown: str) -> None:
    """The shapes that reached every output unmasked: a wrapper before the client, JSON, a token as a URL's
    user, a setter. Names stay readable; what is not a secret stays as it was."""
    assert Redactor().command(argv) == shown


def test_a_long_command_line_is_bounded_after_masking() -> None:
    argv = ["python", "job.py", "--token", "Zq-secret", *(["--flag", "x" * 100] * 20_000)]
    shown = Redactor().command(argv)
    assert shown is not None and len(shown) < MAX_COMMAND_CHARS + 40
    more = len(Redactor().command(argv, limit=None) or "") - MAX_COMMAND_CHARS
    assert shown.startswith("python job.py --token **** --flag") and shown.endswith(f"… ({more} more characters)")
    assert "Zq-secret" not in (Redactor().command(argv, limit=None) or "")
    assert Redactor().command(["python", "x.py"]) == "python x.py"  # a short line is left as it is


@pytest.mark.parametrize("argv", [
    ["python", "train.py", "--max-tokens", "4096", "--keyboard", "us", "PYTHONPATH=/srv/app", "--path", "/data"],
    ["vllm", "serve", "meta/llama", "--tokenizer", "meta/llama", "--compat", "patch"],
    ["mysql", "-p", "shop"],  # mysql's `-p db` asks for the password: db is a database, not a secret
    ["curl", "https://example.org/search?q=token&page=2"],
])
def test_ordinary_words_stay_readable(argv: list[str]) -> None:
    assert Redactor().command(argv) == command_line(argv) and MASK not in command_line(argv)
