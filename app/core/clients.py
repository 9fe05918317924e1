"""The common clients' password flags: data, read by app.core.redact (the one masking function).

The generic rules (a name that says secret, URL credentials, headers, ``key=value``, token prefixes, high-entropy
words) always apply; this table adds what a client's own flags mean, where the flag's name says nothing:
``mysql -pX``, ``ldapsearch -w X``, ``smbclient -U user%X``, ``sqlplus scott/X@db``. A key is a program's name,
or its name and a subcommand (``docker login``: ``docker run -p 80:80`` publishes a port).

How the value is found (``Flag``):
- ``next``: the next word (``-w X``), or glued with ``=`` for a long flag (``--password=X``);
- ``glued``: only glued to the flag (``mysql -pX``: ``mysql -p db`` asks for the password, db is a database);
- ``either``: glued or the next word (``sshpass -pX`` / ``-p X``);
- ``user:pass``, ``user%pass``, ``user,pass``, ``name=value``: the part after the separator, in the next word or
  glued (``curl -b sessionid=X``: a cookie's value).
``POSITIONAL``: bare words that are secrets by their place after the program (and subcommand), counted from 0.
"""

from __future__ import annotations

from typing import Literal

Flag = Literal["next", "glued", "either", "user:pass", "user%pass", "user,pass", "name=value"]


def _same(names: str, flags: dict[str, Flag]) -> dict[str, dict[str, Flag]]:
    return {name: flags for name in names.split()}


FLAGS: dict[str, dict[str, Flag]] = {
    **_same("mysql mysqldump mysqladmin mysqlimport mysqlcheck mysqlshow mysqlslap mariadb mariadb-dump "
            "mariadb-admin mycli", {"-p": "glued"}),
    **_same("sshpass", {"-p": "either"}),
    **_same("redis-cli valkey-cli keydb-cli", {"-a": "either", "--pass": "next"}),
    **_same("redis-server valkey-server", {"--requirepass": "next", "--masterauth": "next"}),
    "curl": {"-u": "user:pass", "--user": "user:pass", "--proxy-user": "user:pass", "-U": "user:pass",
             "--oauth2-bearer": "next", "-E": "user:pass", "--cert": "user:pass", "-b": "name=value",
             "--cookie": "name=value"},
    "wget": {"--password": "next", "--http-password": "next", "--ftp-password": "next", "--proxy-password": "next"},
    **{f"{tool} login": {"-p": "next", "--password": "next"}
       for tool in ("docker", "podman", "buildah", "skopeo", "nerdctl", "oras", "crane auth", "helm registry")},
    "az login": {"-p": "next", "--password": "next"},
    **_same("mongosh mongo mongodump mongorestore mongoexport mongoimport mongostat mongotop mongofiles",
            {"-p": "next", "--password": "next"}),
    "openssl": {"-k": "next", "-pass": "next", "-passin": "next", "-passout": "next"},
    **_same("smbclient rpcclient smbcacls smbget smbtree net", {"-U": "user%pass", "--user": "user%pass"}),
    **_same("ldapsearch ldapadd ldapmodify ldapdelete ldapwhoami ldappasswd ldapcompare ldapmodrdn ldapexop",
            {"-w": "either", "-y": "next"}),
    **_same("mosquitto_pub mosquitto_sub mosquitto_rr", {"-P": "next", "--pw": "next"}),
    **_same("keytool jarsigner", {"-storepass": "next", "-keypass": "next", "-srcstorepass": "next",
                                  "-deststorepass": "next", "-srckeypass": "next", "-destkeypass": "next",
                                  "-new": "next"}),
    **_same("zip zipcloak unzip funzip", {"-P": "next"}),
    **_same("7z 7za 7zz 7zr", {"-p": "glued"}),
    **_same("rar unrar", {"-p": "glued", "-hp": "glued"}),
    "ssh-keygen": {"-N": "next", "-P": "next"},
    "lftp": {"-u": "user,pass"},
    **_same("sqlcmd bcp osql isql", {"-P": "next"}),
    "ipmitool": {"-P": "next"},
    **_same("useradd usermod", {"-p": "next"}),
    "rdesktop": {"-p": "next"},
    **_same("snmpwalk snmpget snmpset snmpbulkwalk snmpbulkget snmptrap snmptable", {"-A": "next", "-X": "next",
                                                                                      "-c": "next"}),
    **_same("xfreerdp xfreerdp3 wlfreerdp sdl-freerdp", {"/p:": "glued"}),
    **_same("ncftp ncftpget ncftpput", {"-p": "next"}),
    "influx": {"-p": "next", "-t": "next"},
    "nmcli": {"password": "next", "wifi-sec.psk": "next", "802-11-wireless-security.psk": "next"},
    "vncpasswd": {"-f": "next"},
    "pure-pw": {"-p": "next"},
    # password hashers: the plaintext they are given is the secret (their output is the hash)
    "slappasswd": {"-s": "next"},
    "caddy hash-password": {"--plaintext": "next", "-p": "next"},
    # mail clients' authentication
    "swaks": {"-ap": "next", "--auth-password": "next", "-au": "next"},
    "sendemail": {"-xp": "next", "-xu": "next"},
    "sendEmail": {"-xp": "next", "-xu": "next"},
    "msmtp": {"--passwordeval": "next"},
    "pdftk": {"input_pw": "next", "user_pw": "next", "owner_pw": "next"},
}

# The bare words of a password hasher's plaintext: every bare word after the program, except the values of the
# flags named (a method, a salt, a file)
HASHED: dict[str, frozenset[str]] = {
    "openssl passwd": frozenset({"-salt", "-in"}),
    "mkpasswd": frozenset({"-m", "--method", "-S", "--salt", "-R", "--rounds", "-P", "--password-fd"}),
}

POSITIONAL: dict[str, tuple[int, ...]] = {
    "vault login": (0,),  # vault login TOKEN
    "mc alias set": (3,),  # mc alias set NAME URL ACCESS_KEY SECRET_KEY
    "mc config host add": (3,),
    "rabbitmqctl add_user": (1,),  # rabbitmqctl add_user NAME PASSWORD
    "rabbitmqctl change_password": (1,),
    "wpa_passphrase": (1,),  # wpa_passphrase SSID PASSPHRASE
    "smbclient": (1,),  # smbclient //host/share PASSWORD
    "isql": (2,),  # isql DSN USER PASSWORD (unixODBC)
    "ngrok authtoken": (0,),  # ngrok authtoken TOKEN
    "ngrok config add-authtoken": (0,),
}

# htpasswd's -b (batch) takes the password as its last word: htpasswd -b FILE USER PASSWORD, -nb USER PASSWORD
LAST_WORD_WITH_FLAG = {"htpasswd": "b", "mosquitto_passwd": "b"}

# Oracle's tools take user/password@database as a word (and as userid=...)
USER_SLASH_PASSWORD = frozenset({"sqlplus", "sql", "rman", "expdp", "impdp", "exp", "imp", "sqlldr", "dgmgrl",
                                 "tkprof", "wrap"})

NAMES = frozenset(key.split()[0] for key in (*FLAGS, *POSITIONAL, *LAST_WORD_WITH_FLAG, *HASHED)) | \
    USER_SLASH_PASSWORD


def hashed(program: str, words: list[str], before: str | None) -> bool:
    """True when the last of ``words`` is a password hasher's plaintext (``before``: the word in front of it)."""
    for key, valued in HASHED.items():
        name, *sub = key.split()
        if name == program and words[:len(sub)] == sub and len(words) > len(sub) and before not in valued:
            return True
    return False


def flags_for(program: str, words: list[str]) -> dict[str, Flag]:
    """The password flags of ``program`` once ``words`` (its bare words so far) are seen: its own, and those of
    each of its subcommands that ``words`` hold in order (``helm registry login``)."""
    found: dict[str, Flag] = dict(FLAGS.get(program, {}))
    for key, flags in FLAGS.items():
        if " " in key and key.startswith(program + " ") and _in_order(key.split()[1:], words):
            found.update(flags)
    return found


def positional(program: str, words: list[str]) -> bool:
    """True when the last of ``words`` (the bare words after ``program``) is a secret by its place."""
    for key, places in POSITIONAL.items():
        name, *sub = key.split()
        if name != program:
            continue
        if words[:len(sub)] == sub and len(words) - len(sub) - 1 in places:
            return True
    return False


def _in_order(wanted: list[str], words: list[str]) -> bool:
    return words[:len(wanted)] == wanted
