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
    line = command_line(["python", "-c", "print('hi')", "--token=abc"])
    assert "abc" not in line and "--token=****" in line and "'print('\"'\"'hi'\"'\"')'" in line


# -- masking by shape: commands generated from the shapes of secrets, with secrets nobody listed ----------------
import string  # noqa: E402

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from app.core.redact import Redactor  # noqa: E402
from tests.support.population import size  # noqa: E402

SECRETS = st.builds(lambda body: f"Zq{body}", st.text(string.ascii_letters + string.digits + "._-", min_size=8,
                                                      max_size=24))
SECRET_WORDS = ["PASSWORD", "TOKEN", "SECRET", "KEY", "PAT", "CREDENTIALS", "API_KEY", "PASSWD", "AUTH"]
PREFIXES = ["", "PG", "SSH", "DB_", "MY_", "GITHUB_", "AWS_SECRET_ACCESS_", "HF_", "OPENAI_"]
FLAG_NAMES = ["password", "db-password", "accessToken", "api-key", "authToken", "client-secret", "token",
              "apiKey", "refresh_token", "passphrase", "pat", "session-cookie"]
HEADERS = ["X-Api-Key", "Authorization", "X-Auth-Token", "Cookie", "Proxy-Authorization", "X-Vault-Token"]
PARAMS = ["token", "api_key", "access_token", "apiKey", "sig", "password", "client_secret"]
JSON_KEYS = ["password", "token", "api_key", "secret", "clientSecret", "auth_token", "passwd"]
USER_FLAGS = ["src-creds", "creds", "user", "dest-creds", "auth"]  # long flags that name credentials: any secret
SHORT_FLAGS = ["n", "c", "a"]  # a short flag says nothing of its value (chown -c root:wheel): the secret must look one
USERS = ["u", "root", "admin", "svc.acct"]


def hashers(secret: str) -> list[list[str]]:
    return [["openssl", "passwd", "-6", secret], ["openssl", "passwd", "-salt", "NaCl", "-1", secret],
            ["mkpasswd", "-m", "sha-512", secret], ["slappasswd", "-s", secret],
            ["caddy", "hash-password", "--plaintext", secret], ["mosquitto_passwd", "-b", "pw.txt", "bob", secret]]


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
        # secrets by what they are, whatever the client: a hasher's plaintext, user:secret after any flag, a
        # cookie, positional passwords, SQL, glued short flags, mail clients, inline code
        *hashers(secret),
        ["tool", f"--{draw(st.sampled_from(USER_FLAGS))}", f"{draw(st.sampled_from(USERS))}:{secret}"],
        ["tool", f"-{draw(st.sampled_from(SHORT_FLAGS))}", f"{draw(st.sampled_from(USERS))}:{secret}9"],
        ["curl", "-b", f"sessionid={secret}", "https://example.org/"], ["smbclient", "//h/share", secret],
        ["isql", "DSN", "user", secret], ["pdftk", "in.pdf", "input_pw", secret, "output", "o.pdf"],
        ["ngrok", "authtoken", secret], ["secretsdump.py", f"dom/admin:{secret}@10.0.0.1"],
        ["mysql", "-e", f"CREATE USER u IDENTIFIED BY '{secret}'"],
        ["psql", "-c", f"ALTER ROLE u WITH PASSWORD '{secret}'"], ["ldapmodify", f"-w{secret}"],
        ["rar", "a", f"-hp{secret}", "x.rar"], ["swaks", "-ap", secret], ["sendemail", "-xp", secret],
        ["msmtp", f"--passwordeval=echo {secret}"],
        [*draw(st.sampled_from([["node", "-e"], ["bun", "-e"], ["julia", "-e"], ["Rscript", "-e"], ["lua", "-e"],
                                 ["ruby", "-e"], ["python3", "-c"], ["perl", "-E"]])), f"login('admin','{secret}')"],
        ["php", "-r", f"login('admin', '{secret}');"],
    ]))
    wrapper = draw(st.sampled_from(WRAPPERS))
    if wrapper:  # the program behind a wrapper (or two)
        shape = [*wrapper, *shape]
        if draw(st.booleans()):
            shape = [*draw(st.sampled_from([w for w in WRAPPERS if w])), *shape]
    if draw(st.booleans()):  # the same, inside one quoted argument
        shape = [*draw(st.sampled_from([["bash", "-c"], ["sh", "-c"]])), shlex.join(shape)]
    return shape, secret


@settings(max_examples=size(600), deadline=None, suppress_health_check=list(HealthCheck), database=None)
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


# -- the clients' own flags, token prefixes, random-looking words: each shape that leaked ----------------------------
LEAKED = [  # (argv with § for the secret)
    ["wget", "--password=§", "https://example.org/f"],
    ["docker", "login", "-p", "§", "registry.example"],
    ["mongosh", "-u", "admin", "-p", "§", "mongodb://db"],
    ["htpasswd", "-b", "/etc/nginx/htpasswd", "bob", "§"],
    ["openssl", "enc", "-aes-256-cbc", "-k", "§", "-in", "f"],
    ["smbclient", "//srv/share", "-U", "bob%§"],
    ["curl", "--oauth2-bearer", "§", "https://api.example.org"],
    ["vault", "login", "§"],
    ["ldapsearch", "-x", "-D", "cn=admin", "-w", "§", "-b", "dc=example"],
    ["mosquitto_pub", "-h", "broker", "-u", "bob", "-P", "§", "-t", "t", "-m", "1"],
    ["keytool", "-list", "-keystore", "k.jks", "-storepass", "§"],
    ["keytool", "-genkey", "-keypass", "§", "-alias", "a"],
    ["app", "https://bob:§/with/slash@db.internal/x"],
    ["app", "https://bob:§@with-at@db.internal/x"],
    ["app", "https://example.org/cb#access_token=§&state=1"],
    ["docker", "run", "--env=MYSQL_ROOT_PASSWORD=§", "mysql"],
    ["helm", "install", "r", "chart", "--set=auth.password=§"],
    ["sqlplus", "scott/§@orcl"],
    ["zip", "-P", "§", "out.zip", "f"],
    ["7z", "a", "-p§", "out.7z", "f"],
    ["ssh-keygen", "-t", "ed25519", "-N", "§", "-f", "k"],
    ["az", "login", "-u", "bob", "-p", "§"],
    ["mc", "alias", "set", "m", "https://s3.example", "AKIDEXAMPLE", "§"],
    ["lftp", "-u", "bob,§", "ftp.example"],
    ["sqlcmd", "-S", "db", "-U", "sa", "-P", "§"],
    ["app", "--hook", "§", "xoxb-"],
    ["node", "s.js", '{"pass\\u0077ord": "§"}'],
]


def _secret() -> str:
    import secrets

    return "Pw9" + secrets.token_urlsafe(12).replace("-", "x").replace("_", "y")


@pytest.mark.parametrize("shape", LEAKED, ids=lambda shape: " ".join(shape[:3]))
def test_each_shape_that_leaked_is_masked(shape: list[str]) -> None:
    secret = _secret()
    argv = [word.replace("§", secret) for word in shape]
    if shape[-1] == "xoxb-":  # a bare Slack token, in no flag's place
        argv = ["app", "--hook", "x", f"xoxb-{secret}"]
    shown = Redactor().command(argv)
    assert shown is not None and secret not in shown, shown
    assert argv[0] in shown and MASK in shown


def test_docker_run_publishing_a_port_is_not_a_password() -> None:
    assert Redactor().command(["docker", "run", "-p", "8080:80", "nginx"]) == "docker run -p 8080:80 nginx"


@pytest.mark.parametrize("token", ["ghp_" + "aB3" * 12, "glpat-" + "xY7" * 7, "AKIA" + "ABCDEFGH12345678",
                                   "xoxb-1234-5678-" + "aBc9" * 4, "github_pat_" + "11AbC" * 6,
                                   "hf_" + "QwErTy12" * 3, "sk-" + "proj" + "Ab1" * 8])
def test_known_token_prefixes_are_masked_wherever_they_stand(token: str) -> None:
    for argv in (["app", token], ["app", f"--hook={token}"], ["sh", "-c", f"echo {token} | app"]):
        shown = Redactor().command(argv)
        assert shown is not None and token not in shown, shown


def test_a_password_after_a_short_flag_of_an_unknown_client_is_masked() -> None:
    assert Redactor().command(["acme-cli", "-u", "bob", "-p", "hunter2!"]) == "acme-cli -u bob -p ****"
    assert Redactor().command(["acme-cli", "-p", "8080", "-o", "out.bin"]) == "acme-cli -p 8080 -o out.bin"


WRAP = [["sudo", "-u", "db"], ["nohup"], ["timeout", "30"], ["env", "LANG=C"], ["nice", "-n", "5"],
        ["docker", "exec", "-it", "c1"], ["kubectl", "exec", "pod", "--"], ["ssh", "host"], ["xargs", "-0"]]


@settings(max_examples=size(400), deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(shape=st.sampled_from(LEAKED[:-2]), wrappers=st.lists(st.sampled_from(WRAP), max_size=2),
       quoted=st.booleans(), body=st.text(string.ascii_letters + string.digits, min_size=8, max_size=20))
def test_leaked_shapes_stay_masked_inside_wrappers(shape: list[str], wrappers: list[list[str]], quoted: bool,
                                                   body: str) -> None:
    secret = "Q7" + body
    argv = [word.replace("§", secret) for word in shape]
    for wrapper in wrappers:
        argv = [*wrapper, *argv]
    if quoted:
        argv = ["bash", "-c", shlex.join(argv)]
    shown = Redactor().command(argv)
    assert shown is not None and secret not in shown, (argv, shown)


def benign_lines(count: int, seed: int = 7) -> list[list[str]]:
    """Ordinary command lines of a GPU machine: paths, model names, git hashes, UUIDs, numbers, plain URLs."""
    import random
    import uuid

    rng = random.Random(seed)
    models = ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-72B-Instruct-AWQ", "mistralai/Mixtral-8x7B-v0.1",
              "stabilityai/stable-diffusion-xl-base-1.0", "openai/whisper-large-v3", "bert-base-uncased",
              "google/gemma-2-27b-it", "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "TheBloke/Llama-2-70B-GPTQ"]
    dirs = ["/data", "/scratch/alice", "/home/bob/runs", "/mnt/nvme0/ckpt", "/opt/models", "/workspace/exp"]
    words = ["train", "eval", "serve", "bench", "finetune", "export", "sweep", "infer", "prepare"]

    def path() -> str:
        return f"{rng.choice(dirs)}/{rng.choice(words)}_{rng.randint(1, 999)}/{rng.choice(['ckpt', 'log', 'out'])}" \
               f"-{rng.randint(0, 99999)}.{rng.choice(['pt', 'json', 'txt', 'bin', 'safetensors'])}"

    def one() -> list[str]:
        kind = rng.randrange(8)
        sha = f"{rng.getrandbits(160):040x}"
        run = str(uuid.UUID(int=rng.getrandbits(128)))
        if kind == 0:
            return ["python", f"{rng.choice(words)}.py", "--model", rng.choice(models), "--lr", f"{rng.random():.5f}",
                    "--batch-size", str(rng.choice([8, 16, 32, 64])), "--output", path(),
                    "--seed", str(rng.randint(0, 9999))]
        if kind == 1:
            return ["vllm", "serve", rng.choice(models), "--port", str(rng.randint(8000, 9000)), "--max-model-len",
                    str(rng.choice([4096, 8192, 32768])), "--tensor-parallel-size", str(rng.choice([1, 2, 4, 8]))]
        if kind == 2:
            return ["git", "checkout", sha[: rng.choice([7, 12, 40])]]
        if kind == 3:
            return ["torchrun", "--nproc_per_node", "8", f"{rng.choice(words)}.py", "--run-id", run, "--data", path()]
        if kind == 4:
            return ["curl", "-sS", f"https://huggingface.co/{rng.choice(models)}/resolve/main/config.json", "-o",
                    path()]
        if kind == 5:
            return ["docker", "run", "--gpus", "all", "-v", f"{rng.choice(dirs)}:/data", "-p",
                    f"{rng.randint(1024, 9999)}:8000",
                    f"nvcr.io/nvidia/pytorch:{rng.randint(22, 25)}.0{rng.randint(1, 9)}-py3"]
        if kind == 6:
            return ["ollama", "run", rng.choice(["llama3.1:8b", "qwen2.5:14b", "mistral:7b-instruct-q4_K_M"])]
        return ["python", "-m", "jupyter", "lab", "--ip", "127.0.0.1", "--port", str(rng.randint(8800, 8900)),
                "--notebook-dir", rng.choice(dirs), f"--ServerApp.root_dir={rng.choice(dirs)}"]

    return [one() for _ in range(count)]


def test_false_positives_on_ordinary_command_lines_are_under_two_percent() -> None:
    lines = benign_lines(1000)
    masked = [argv for argv in lines if MASK in (Redactor().command(argv) or "")]
    assert len(masked) / len(lines) < 0.02, masked[:5]


def test_free_text_masks_a_secret_flags_value() -> None:
    """A notification's or an alert's text: ``--password X`` in a sentence, as well as ``k=v``."""
    shown = Redactor().text("GPU 0 is busy: mysql-backup --password hunter2x --host db (PID 7)")
    assert "hunter2x" not in shown and "--password ****" in shown and "--host db" in shown


@pytest.mark.parametrize(("argv", "shown"), [
    # a hasher's plaintext, user:secret after any flag, a cookie, positional passwords, SQL, glued short flags, mail
    # clients, inline code, the shortest Slack token; and what must stay as it was
    (["openssl", "passwd", "-6", "hunter2x"], "openssl passwd -6 ****"),
    (["openssl", "passwd", "-salt", "NaCl", "hunter2x"], "openssl passwd -salt NaCl ****"),
    (["mkpasswd", "-m", "sha-512", "hunter2x"], "mkpasswd -m sha-512 ****"),
    (["mosquitto_passwd", "-b", "f", "u", "hunter2x"], "mosquitto_passwd -b f u ****"),
    (["etcdctl", "--user", "root:hunter2x", "get", "k"], "etcdctl --user root:**** get k"),
    (["transmission-remote", "-n", "u:hunter2x"], "transmission-remote -n u:****"),
    (["curl", "-b", "sessionid=hunter2x", "http://x"], "curl -b sessionid=**** http://x"),
    (["smbclient", "//h/share", "hunter2x"], "smbclient //h/share ****"),
    (["isql", "DSN", "user", "hunter2x"], "isql DSN user ****"),
    (["smbmap", "dom/admin:hunter2x@10.0.0.1"], "smbmap dom/admin:****@10.0.0.1"),
    (["ldapmodify", "-whunter2x"], "ldapmodify -w****"), (["rar", "a", "-hphunter2x", "x.rar"], "rar a -hp**** x.rar"),
    (["worker", "-phunter2x"], "worker -p****"), (["notify", "xoxb-123456789012"], "notify ****"),
    (["node", "-e", "login('admin','hunter2x')"], "node -e 'login('\"'\"'admin'\"'\"','\"'\"'****'\"'\"')'"),
    (["docker", "run", "-p", "8080:80", "nginx:1.25"], "docker run -p 8080:80 nginx:1.25"),
    (["docker", "build", "-t", "app:latest", "."], "docker build -t app:latest ."),
    (["docker", "build", "-t", "app:Release", "."], "docker build -t app:Release ."),
    (["tool", "--src-creds", "u:Zqabcdefgh"], "tool --src-creds u:****"),
    (["tool", "-c", "u:ZqAAAAAAAA"], "tool -c u:****"),
    (["chown", "-c", "root:wheel", "f"], "chown -c root:wheel f"),
    (["ssh", "-L", "8080:localhost:80", "host"], "ssh -L 8080:localhost:80 host"),
    (["cron", "--at", "12:30"], "cron --at 12:30"),
])
def test_secrets_by_what_they_are(argv: list[str], shown: str) -> None:
    assert Redactor().command(argv) == shown
