"""The real servers of the images (bench/images.py) as the bench runs them in
a container, and a minimal client of each, written with the standard library
(the guest has no client packages): every server listens on a unix socket in
/ctl, a folder the container shares with the guest, and a request writes a
key and reads it back (nginx: a GET of its default page), so that the
server's code for both paths runs. A server's `args` run as the container's
process, as `user` (a name in the image's /etc/passwd) when it is set;
`prepare(ctl)` writes what it needs into the /ctl folder first."""
import http.client
import os
import socket
import struct

NGINX_CONF = """user www-data;
worker_processes 1;
pid /tmp/nginx.pid;
error_log /ctl/error.log;
events { worker_connections 64; }
http {
    include /etc/nginx/mime.types;
    access_log off;
    server {
        listen unix:/ctl/sock;
        root /usr/share/nginx/html;
        location / { index index.html index.nginx-debian.html; }
    }
}
"""


def _connect(path):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    try:
        s.connect(path)
    except OSError:
        s.close()
        raise
    return s


def _recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise RuntimeError("server closed the connection")
        buf += chunk
    return buf


class Redis:
    """redis-server; a request: SET then GET of a key."""
    user = None
    socket = "sock"
    args = ["/usr/bin/redis-server", "--port", "0", "--unixsocket", "/ctl/sock",
            "--unixsocketperm", "777", "--save", "", "--appendonly", "no",
            "--daemonize", "no"]

    @staticmethod
    def prepare(ctl):
        pass

    @staticmethod
    def request(path, i):
        with _connect(path) as s:
            key, val = f"k{i}", f"v{i}" * 8
            s.sendall(f"*3\r\n$3\r\nSET\r\n${len(key)}\r\n{key}\r\n${len(val)}\r\n{val}\r\n"
                      f"*2\r\n$3\r\nGET\r\n${len(key)}\r\n{key}\r\n".encode())
            want = f"+OK\r\n${len(val)}\r\n{val}\r\n".encode()
            got = b""
            while len(got) < len(want):
                chunk = s.recv(4096)
                if not chunk:
                    break
                got += chunk
            if got != want:
                raise RuntimeError(f"redis answered {got[:80]!r}")


class Nginx:
    """nginx; a request: GET / (Debian's default page)."""
    user = None
    socket = "sock"
    args = ["/usr/sbin/nginx", "-c", "/ctl/nginx.conf", "-g", "daemon off;"]

    @staticmethod
    def prepare(ctl):
        with open(os.path.join(ctl, "nginx.conf"), "w") as f:
            f.write(NGINX_CONF)

    @staticmethod
    def request(path, i):
        conn = http.client.HTTPConnection("localhost", timeout=10)
        conn.sock = _connect(path)
        conn.request("GET", "/")
        r = conn.getresponse()
        body = r.read()
        conn.close()
        if r.status != 200 or b"nginx" not in body:
            raise RuntimeError(f"nginx answered {r.status}: {body[:80]!r}")


class Postgres:
    """postgres 15 on the cluster the package made in the image (Debian's
    configuration, no TCP, trust on the socket); a request: an upsert and
    a select of one row, over the frontend/backend protocol 3.0."""
    user = "postgres"
    socket = ".s.PGSQL.5432"
    args = ["/usr/lib/postgresql/15/bin/postgres", "-D", "/var/lib/postgresql/15/main",
            "-c", "config_file=/etc/postgresql/15/main/postgresql.conf",
            "-c", "hba_file=/ctl/pg_hba.conf", "-c", "listen_addresses=",
            "-c", "unix_socket_directories=/ctl", "-c", "ssl=off",
            "-c", "external_pid_file=/tmp/postgres.pid"]

    @staticmethod
    def prepare(ctl):
        with open(os.path.join(ctl, "pg_hba.conf"), "w") as f:
            f.write("local all all trust\n")

    @staticmethod
    def _message(s):
        kind, n = struct.unpack("!cI", _recv_exact(s, 5))
        return kind, _recv_exact(s, n - 4)

    @classmethod
    def _query(cls, s, sql):
        """Rows of SQL's result, each a list of text values."""
        body = sql.encode() + b"\0"
        s.sendall(b"Q" + struct.pack("!I", len(body) + 4) + body)
        rows, error = [], None
        while True:
            kind, data = cls._message(s)
            if kind == b"D":
                (ncols,), pos, row = struct.unpack_from("!H", data), 2, []
                for _ in range(ncols):
                    (n,) = struct.unpack_from("!i", data, pos)
                    pos += 4
                    row.append(None if n < 0 else data[pos:pos + n].decode())
                    pos += max(n, 0)
                rows.append(row)
            elif kind == b"E":
                error = data
            elif kind == b"Z":
                if error is not None:
                    raise RuntimeError(f"postgres: {error[:120]!r}")
                return rows

    @classmethod
    def request(cls, path, i):
        with _connect(path) as s:
            params = b"user\0postgres\0database\0postgres\0\0"
            s.sendall(struct.pack("!II", len(params) + 8, 196608) + params)
            while True:
                kind, data = cls._message(s)
                if kind == b"E":
                    raise RuntimeError(f"postgres: {data[:120]!r}")
                if kind == b"R" and data[:4] != b"\0\0\0\0":
                    raise RuntimeError("postgres asks for a password: pg_hba.conf not read")
                if kind == b"Z":
                    break
            val = f"v{i}" * 8
            if i == 0:
                cls._query(s, "CREATE TABLE IF NOT EXISTS kv (k int PRIMARY KEY, v text)")
            cls._query(s, f"INSERT INTO kv VALUES ({i}, '{val}') "
                       "ON CONFLICT (k) DO UPDATE SET v = excluded.v")
            rows = cls._query(s, f"SELECT v FROM kv WHERE k = {i}")
            if rows != [[val]]:
                raise RuntimeError(f"postgres answered {rows!r}")
            s.sendall(b"X\0\0\0\4")


class Mariadb:
    """mariadbd on the data directory the package made in the image
    (Debian's configuration, no TCP); the client is root, authenticated by
    the unix_socket plugin as Debian sets root up; a request: a REPLACE and
    a SELECT of one row, over the client/server protocol."""
    user = None  # mariadbd starts as root and drops to --user
    socket = "sock"
    args = ["/usr/sbin/mariadbd", "--user=mysql", "--skip-networking", "--socket=/ctl/sock",
            "--pid-file=/tmp/mariadbd.pid"]
    CAPS = 0x1 | 0x200 | 0x2000 | 0x8000 | 0x80000  # long password, 4.1, transactions,
    # secure connection, plugin auth

    @staticmethod
    def prepare(ctl):
        pass

    @staticmethod
    def _packet(s):
        head = _recv_exact(s, 4)
        n = head[0] | head[1] << 8 | head[2] << 16
        return head[3], _recv_exact(s, n)

    @staticmethod
    def _send(s, seq, payload):
        n = len(payload)
        s.sendall(bytes((n & 0xff, n >> 8 & 0xff, n >> 16, seq & 0xff)) + payload)

    @staticmethod
    def _lenenc(data, pos):
        """A length-encoded string of DATA at POS: (text or None, next pos)."""
        b = data[pos]
        if b == 0xfb:
            return None, pos + 1
        size, skip = {0xfc: (2, 1), 0xfd: (3, 1), 0xfe: (8, 1)}.get(b, (0, 0))
        n = int.from_bytes(data[pos + skip:pos + skip + size], "little") if skip else b
        start = pos + 1 + size
        return data[start:start + n].decode(), start + n

    @classmethod
    def _query(cls, s, sql):
        """Rows of SQL's result (none for a statement), text values."""
        cls._send(s, 0, b"\x03" + sql.encode())
        _, first = cls._packet(s)
        if first[0] == 0xff:
            raise RuntimeError(f"mariadb: {first[3:120]!r}")
        if first[0] == 0x00:
            return []
        rows, eofs = [], 0
        while eofs < 2:  # column definitions, then rows, each closed by an EOF
            _, data = cls._packet(s)
            if data[0] == 0xff:
                raise RuntimeError(f"mariadb: {data[3:120]!r}")
            if data[0] == 0xfe and len(data) < 9:
                eofs += 1
            elif eofs == 1:
                row, pos = [], 0
                while pos < len(data):
                    val, pos = cls._lenenc(data, pos)
                    row.append(val)
                rows.append(row)
        return rows

    @classmethod
    def request(cls, path, i):
        with _connect(path) as s:
            seq, hello = cls._packet(s)
            if hello[0] != 0x0a:
                raise RuntimeError(f"mariadb: {hello[:120]!r}")
            cls._send(s, seq + 1, struct.pack("<IIB", cls.CAPS, 1 << 24, 33) + bytes(23)
                      + b"root\0" + b"\0" + b"unix_socket\0")
            for _ in range(3):
                seq, data = cls._packet(s)
                if data[0] == 0x00:
                    break
                if data[0] != 0xfe:  # only an auth switch may come instead
                    raise RuntimeError(f"mariadb login: {data[:120]!r}")
                cls._send(s, seq + 1, b"")
            else:
                raise RuntimeError("mariadb login: auth switches without end")
            val = f"v{i}" * 8
            if i == 0:
                cls._query(s, "CREATE DATABASE IF NOT EXISTS bench")
                cls._query(s, "CREATE TABLE IF NOT EXISTS bench.kv "
                           "(k int PRIMARY KEY, v varchar(64)) ENGINE=InnoDB")
            cls._query(s, f"REPLACE INTO bench.kv VALUES ({i}, '{val}')")
            rows = cls._query(s, f"SELECT v FROM bench.kv WHERE k = {i}")
            if rows != [[val]]:
                raise RuntimeError(f"mariadb answered {rows!r}")
            cls._send(s, 0, b"\x01")


SERVERS = {"redis": Redis, "nginx": Nginx, "postgres": Postgres, "mariadb": Mariadb}


def passwd_ids(rootfs, name):
    """(uid, gid) of user NAME in ROOTFS's /etc/passwd."""
    with open(os.path.join(rootfs, "etc/passwd")) as f:
        for line in f:
            fields = line.split(":")
            if fields[0] == name:
                return int(fields[2]), int(fields[3])
    raise RuntimeError(f"no user {name} in {rootfs}/etc/passwd")
