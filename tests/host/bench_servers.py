#!/usr/bin/env python3
"""Host tests of the bench's server clients (bench/guest/servers.py) against
small fake servers on unix sockets, speaking each protocol as far as the
clients use it: a right answer passes, a wrong row, an error or a failed
login raises, so that a services or serverramp case cannot count a server
as ready or serving when it is not. Prints KTAP; tests/host/bench-servers.sh
runs it."""
import os
import socket
import struct
import sys
import tempfile
import threading

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "bench/guest"))
from ktap import main, test  # noqa: E402
import servers  # noqa: E402



def raises(fn, *args):
    """The message of the RuntimeError FN(*ARGS) raises; fails if none."""
    try:
        fn(*args)
    except RuntimeError as e:
        return str(e)
    raise AssertionError(f"{fn.__qualname__} did not raise")


def recv_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


class Fake:
    """A one-connection-at-a-time server on a unix socket in a temporary
    folder, HANDLER(conn) serving each connection in a thread."""

    def __init__(self, handler):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "sock")
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(self.path)
        self.sock.listen(4)
        self.handler = handler
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                try:
                    self.handler(conn)
                except (EOFError, OSError):
                    pass

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        self.sock.close()
        self.dir.cleanup()


# ---- postgres ----------------------------------------------------------------

def pg_msg(kind, body=b""):
    return kind + struct.pack("!I", len(body) + 4) + body


def pg_server(store, mode="ok"):
    """MODE: ok; wrong (a select answers another value); error (every
    query fails); password (asks for one)."""
    def handle(conn):
        (n,) = struct.unpack("!I", recv_exact(conn, 4))
        recv_exact(conn, n - 4)
        if mode == "password":
            conn.sendall(pg_msg(b"R", struct.pack("!I", 3)))
            return
        conn.sendall(pg_msg(b"R", struct.pack("!I", 0)) + pg_msg(b"Z", b"I"))
        while True:
            kind = recv_exact(conn, 1)
            (n,) = struct.unpack("!I", recv_exact(conn, 4))
            body = recv_exact(conn, n - 4)
            if kind == b"X":
                return
            sql = body.rstrip(b"\0").decode()
            out = b""
            if mode == "error":
                out += pg_msg(b"E", b"SERROR\0Mrelation does not exist\0\0")
            elif sql.startswith("INSERT"):
                k, v = sql.split("VALUES (")[1].split(")")[0].split(", ")
                store[int(k)] = v.strip("'")
                out += pg_msg(b"C", b"INSERT 0 1\0")
            elif sql.startswith("SELECT"):
                v = store.get(int(sql.rsplit("= ", 1)[1]), "")
                v = "x" + v if mode == "wrong" else v
                out += pg_msg(b"T", b"\0\1v\0" + bytes(18))
                out += pg_msg(b"D", struct.pack("!Hi", 1, len(v)) + v.encode())
                out += pg_msg(b"C", b"SELECT 1\0")
            else:
                out += pg_msg(b"C", b"CREATE TABLE\0")
            conn.sendall(out + pg_msg(b"Z", b"I"))
    return handle


@test
def postgres_round_trip():
    store = {}
    with Fake(pg_server(store)) as path:
        servers.Postgres.request(path, 0)
        servers.Postgres.request(path, 7)
    if store.get(7) != "v7" * 8:
        raise AssertionError(f"the fake holds {store}")


@test
def postgres_wrong_row_raises():
    with Fake(pg_server({}, "wrong")) as path:
        msg = raises(servers.Postgres.request, path, 3)
    if "postgres answered" not in msg:
        raise AssertionError(msg)


@test
def postgres_error_raises():
    with Fake(pg_server({}, "error")) as path:
        msg = raises(servers.Postgres.request, path, 0)
    if "relation does not exist" not in msg:
        raise AssertionError(msg)


@test
def postgres_password_raises():
    with Fake(pg_server({}, "password")) as path:
        raises(servers.Postgres.request, path, 0)


# ---- mariadb -----------------------------------------------------------------

def my_packet(seq, payload):
    n = len(payload)
    return bytes((n & 0xff, n >> 8 & 0xff, n >> 16, seq)) + payload


def my_read(conn):
    head = recv_exact(conn, 4)
    return head[3], recv_exact(conn, head[0] | head[1] << 8 | head[2] << 16)


MY_OK = b"\0\0\0\2\0\0\0"
MY_EOF = b"\xfe\0\0\2\0"


def my_server(store, mode="ok"):
    """MODE: ok (after an auth switch); wrong (a select answers another
    value); denied (the login fails)."""
    def handle(conn):
        conn.sendall(my_packet(0, b"\x0a10.11.19-MariaDB\0" + bytes(40)))
        seq, _ = my_read(conn)
        if mode == "denied":
            conn.sendall(my_packet(seq + 1, b"\xff\x15\x04#28000Access denied"))
            return
        conn.sendall(my_packet(seq + 1, b"\xfeunix_socket\0"))
        seq, data = my_read(conn)
        if data:
            raise AssertionError(f"auth switch answered {data!r}")
        conn.sendall(my_packet(seq + 1, MY_OK))
        while True:
            _, data = my_read(conn)
            if data[:1] == b"\x01":
                return
            sql = data[1:].decode()
            if sql.startswith("REPLACE"):
                k, v = sql.split("VALUES (")[1].split(")")[0].split(", ")
                store[int(k)] = v.strip("'")
                conn.sendall(my_packet(1, MY_OK))
            elif sql.startswith("SELECT"):
                v = store.get(int(sql.rsplit("= ", 1)[1]), "")
                v = ("x" + v if mode == "wrong" else v).encode()
                conn.sendall(my_packet(1, b"\x01") + my_packet(2, b"\x03def" + bytes(20))
                             + my_packet(3, MY_EOF) + my_packet(4, bytes((len(v),)) + v)
                             + my_packet(5, MY_EOF))
            else:
                conn.sendall(my_packet(1, MY_OK))
    return handle


@test
def mariadb_round_trip_after_auth_switch():
    store = {}
    with Fake(my_server(store)) as path:
        servers.Mariadb.request(path, 0)
        servers.Mariadb.request(path, 5)
    if store.get(5) != "v5" * 8:
        raise AssertionError(f"the fake holds {store}")


@test
def mariadb_wrong_row_raises():
    with Fake(my_server({}, "wrong")) as path:
        msg = raises(servers.Mariadb.request, path, 2)
    if "mariadb answered" not in msg:
        raise AssertionError(msg)


@test
def mariadb_denied_login_raises():
    with Fake(my_server({}, "denied")) as path:
        msg = raises(servers.Mariadb.request, path, 0)
    if "Access denied" not in msg:
        raise AssertionError(msg)


# ---- redis and nginx ---------------------------------------------------------

def redis_server(answer):
    def handle(conn):
        data = b""
        while data.count(b"\r\n") < 12:  # SET (7 lines) and GET (5)
            data += conn.recv(4096)
        val = data.split(b"\r\n")[6]
        conn.sendall(answer(val))
    return handle


@test
def redis_set_get():
    with Fake(redis_server(lambda v: b"+OK\r\n$%d\r\n%s\r\n" % (len(v), v))) as path:
        servers.Redis.request(path, 4)
    with Fake(redis_server(lambda v: b"+OK\r\n$-1\r\n")) as path:
        raises(servers.Redis.request, path, 4)


def http_server(status, body):
    def handle(conn):
        while b"\r\n\r\n" not in conn.recv(4096):
            pass
        conn.sendall(b"HTTP/1.1 %d X\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                     % (status, len(body), body))
    return handle


@test
def nginx_get():
    with Fake(http_server(200, b"<title>Welcome to nginx!</title>")) as path:
        servers.Nginx.request(path, 0)
    with Fake(http_server(502, b"bad gateway")) as path:
        raises(servers.Nginx.request, path, 0)


@test
def passwd_ids_of_a_user():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "etc"))
        with open(os.path.join(root, "etc/passwd"), "w") as f:
            f.write("root:x:0:0::/root:/bin/sh\npostgres:x:100:102::/var/lib/postgresql:/bin/sh\n")
        if servers.passwd_ids(root, "postgres") != (100, 102):
            raise AssertionError(servers.passwd_ids(root, "postgres"))
        raises(servers.passwd_ids, root, "mysql")


if __name__ == "__main__":
    sys.exit(main())
