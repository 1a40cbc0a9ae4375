"""Throwaway database and cache servers for integration tests, from the installed binaries
(a Redis Cluster: three of them).

Each runs on a free loopback port with its files in a temporary directory, in a session of its
own, and is stopped by pid (a graceful signal, SIGKILL after a timeout). Leftovers are stopped
at exit, and where ``setpriv`` exists get SIGKILL should the test process die.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO, Any, ClassVar

LOOPBACK = "127.0.0.1"


class ServiceUnavailable(RuntimeError):
    """A server cannot be provided: a binary is missing or it failed to start."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def _require(path: str | Path | None, what: str) -> str:
    if path is None or not os.access(path, os.X_OK):
        raise ServiceUnavailable(f"{what} not found on this machine")
    return str(path)


def _tail(path: Path, lines: int = 30) -> str:
    text = path.read_text(errors="replace") if path.exists() else ""
    return "\n".join(text.splitlines()[-lines:]) or "(empty log)"


class Server:
    """One throwaway server; its port and data survive ``stop()``/``kill()`` + ``start()``."""

    kind: ClassVar[str]
    url_template: ClassVar[str]  # formatted with host and port
    database: ClassVar[str | None] = None  # created over ``_sql()`` after the first start
    stop_signal: ClassVar[signal.Signals] = signal.SIGTERM
    run_as: pwd.struct_passwd | None = None  # system user to run as when we are root

    def __init__(self, startup_timeout: float = 60.0, stop_timeout: float = 15.0) -> None:
        self._locate()  # raises ServiceUnavailable before anything is created
        self.startup_timeout, self.stop_timeout = startup_timeout, stop_timeout
        self.port = free_port()
        self.tmpdir = Path(tempfile.mkdtemp(prefix=f"raffle-{self.kind}-"))
        self.datadir, self.log_path = self.tmpdir / "data", self.tmpdir / "server.log"
        self.startup_seconds: float | None = None  # duration of the last start()
        self._proc: subprocess.Popen[bytes] | None = None
        self._initialized = False
        if self.run_as is not None:
            os.chown(self.tmpdir, self.run_as.pw_uid, self.run_as.pw_gid)
        atexit.register(self.close)

    def _locate(self) -> None:  # find the binaries; raise ServiceUnavailable if missing
        raise NotImplementedError

    def _command(self) -> list[str]:  # the server's command line
        raise NotImplementedError

    def _init_command(self) -> list[str] | None:  # one-off set-up before the first start
        return None

    def _sql(self, sql: str) -> list[str]:  # a client command line running ``sql``
        raise NotImplementedError

    def _ready(self) -> bool:  # a TCP connect, then a real protocol round-trip
        with socket.create_connection((LOOPBACK, self.port), 1):
            args = self._sql("SELECT 1")
            return subprocess.run(args, check=False, capture_output=True, timeout=5).returncode == 0

    @property
    def url(self) -> str:
        return self.url_template.format(host=LOOPBACK, port=self.port)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> None:
        if self.running:
            return
        began = time.monotonic()
        if not self._initialized and (init := self._init_command()):
            self._run(init, "init")
        command = self._command()
        if setpriv := shutil.which("setpriv"):  # execs in place: the pid stays the server's
            command = [setpriv, "--pdeathsig", "KILL", "--", *command]
        with self.log_path.open("ab") as log:
            self._proc = subprocess.Popen(command, **self._options(log))
        self._wait_ready()
        if not self._initialized and self.database:
            self._run(self._sql(f"CREATE DATABASE {self.database}"), "createdb")
        self._initialized = True
        self.startup_seconds = time.monotonic() - began

    def stop(self) -> None:
        """Graceful shutdown; SIGKILL if the server is not gone after ``stop_timeout``."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(self.stop_signal)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(self.stop_timeout)
        self.kill()

    def kill(self) -> None:
        """SIGKILL the server and its whole process group, as a crash would."""
        if self._proc is not None:
            with contextlib.suppress(ProcessLookupError):  # the whole group, i.e. its children
                os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
        self._proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        """Stop the server and delete its directory."""
        self.stop()
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def _options(self, log: IO[bytes]) -> dict[str, Any]:
        options = {"stdin": subprocess.DEVNULL, "stdout": log, "stderr": log, "cwd": self.tmpdir}
        options["start_new_session"] = True  # its own process group, out of reach of tty ^C
        if (user := self.run_as) is not None:
            options |= {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
        return options

    def _run(self, args: list[str], what: str) -> None:
        log = self.tmpdir / f"{what}.log"
        with log.open("ab") as out:
            done = subprocess.run(args, check=False, timeout=60, **self._options(out))
        if done.returncode != 0:
            raise ServiceUnavailable(f"{self.kind} {what} failed; log tail:\n{_tail(log)}")

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while self.running and time.monotonic() < deadline:
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):  # not up yet
                if self._ready():
                    return
            time.sleep(0.05)
        problem = f"not ready after {self.startup_timeout:.0f}s" if self.running else "exited"
        self.kill()
        raise ServiceUnavailable(f"{self.kind} {problem}; log tail:\n{_tail(self.log_path)}")


class PostgresServer(Server):
    kind = "postgres"
    url_template = "postgresql+asyncpg://postgres@{host}:{port}/raffle"
    database = "raffle"
    stop_signal = signal.SIGINT  # "fast" shutdown; SIGTERM waits for every client to leave
    SETTINGS = "fsync=off synchronous_commit=off full_page_writes=off max_connections=300"

    def _locate(self) -> None:
        bindirs = Path("/usr/lib/postgresql").glob("*/bin")
        newest = max(bindirs, key=lambda p: p.parent.name.zfill(8), default=None)
        self.bindir = newest or Path("/usr/lib/postgresql/(none)/bin")
        for tool in ("initdb", "postgres", "psql"):
            _require(self.bindir / tool, f"PostgreSQL's {tool}")
        if os.geteuid() == 0:  # postgres refuses to run as root
            try:
                self.run_as = pwd.getpwnam("postgres")
            except KeyError:
                raise ServiceUnavailable("running as root and no 'postgres' user") from None

    def _init_command(self) -> list[str]:
        initdb = [str(self.bindir / "initdb"), "-D", str(self.datadir), "-U", "postgres"]
        return [*initdb, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"]

    def _command(self) -> list[str]:
        command = [str(self.bindir / "postgres"), "-D", str(self.datadir), "-p", str(self.port)]
        settings = [f"listen_addresses={LOOPBACK}", *self.SETTINGS.split()]
        return [*command, "-k", str(self.tmpdir), *(a for s in settings for a in ("-c", s))]

    def _sql(self, sql: str) -> list[str]:
        psql = [str(self.bindir / "psql"), "-X", "-v", "ON_ERROR_STOP=1", "-U", "postgres"]
        return [*psql, "-h", LOOPBACK, "-p", str(self.port), "-d", "postgres", "-c", sql]


class MariaDBServer(Server):
    kind = "mariadb"
    url_template = "mysql+asyncmy://root@{host}:{port}/raffle"
    database = "raffle"
    SETTINGS = (
        "max-connections=500 character-set-server=utf8mb4 collation-server=utf8mb4_unicode_ci"
        " innodb-flush-log-at-trx-commit=0 innodb-buffer-pool-size=128M"
        " innodb-log-file-size=32M innodb-doublewrite=0 skip-name-resolve"
    )

    def _locate(self) -> None:
        self.install_db = _require(shutil.which("mariadb-install-db"), "mariadb-install-db")
        mariadbd = shutil.which("mariadbd") or shutil.which("mariadbd", path="/usr/sbin")
        self.mariadbd = _require(mariadbd, "mariadbd")
        self.client = _require(shutil.which("mariadb"), "the mariadb client")

    def _common(self) -> list[str]:
        settings = [f"--{setting}" for setting in self.SETTINGS.split()]
        as_root = ["--user=root"] if os.geteuid() == 0 else []  # mariadbd refuses root otherwise
        return ["--no-defaults", *as_root, f"--datadir={self.datadir}", *settings]

    def _init_command(self) -> list[str]:  # "normal": root@127.0.0.1 etc., empty password
        auth = ["--auth-root-authentication-method=normal", "--skip-test-db"]
        return [self.install_db, *self._common(), *auth]

    def _command(self) -> list[str]:
        files = [f"--tmpdir={self.tmpdir}", f"--pid-file={self.tmpdir / 'mariadb.pid'}"]
        network = [f"--port={self.port}", f"--bind-address={LOOPBACK}"]
        socket_file = f"--socket={self.tmpdir / 'mariadb.sock'}"
        return [self.mariadbd, *self._common(), *files, *network, socket_file]

    def _sql(self, sql: str) -> list[str]:
        client = [self.client, "--no-defaults", "--protocol=TCP", "--connect-timeout=2"]
        return [*client, "-h", LOOPBACK, "-P", str(self.port), "-u", "root", "-e", sql]


class RedisServer(Server):
    kind = "redis"
    url_template = "redis://{host}:{port}/0"

    def _locate(self) -> None:
        self.binary = _require(shutil.which("redis-server"), "redis-server")

    def _command(self) -> list[str]:
        no_persistence = ["--save", "", "--appendonly", "no", "--dir", str(self.tmpdir)]
        return [self.binary, "--port", str(self.port), "--bind", LOOPBACK, *no_persistence]

    def _ready(self) -> bool:
        with socket.create_connection((LOOPBACK, self.port), 1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")


class RabbitMQServer(Server):
    """A RabbitMQ node of its own: node name, ports, data, logs and plugins under the tmp dir,
    so it can be killed and restarted without touching the system's broker."""

    kind = "rabbitmq"
    url_template = "amqp://guest:guest@{host}:{port}/"
    stop_signal = signal.SIGTERM  # the Erlang VM shuts down cleanly on it

    def _locate(self) -> None:
        self.binary = _require(Path("/usr/lib/rabbitmq/bin/rabbitmq-server"), "rabbitmq-server")

    def _command(self) -> list[str]:
        (self.tmpdir / "enabled_plugins").write_text("[].\n")
        (self.tmpdir / "rabbitmq.conf").write_text(
            f"listeners.tcp.1 = {LOOPBACK}:{self.port}\n"
            "log.console = false\nlog.file.level = warning\n"
            "vm_memory_high_watermark.relative = 0.2\ndisk_free_limit.absolute = 50MB\n"
        )
        return [self.binary]

    def _options(self, log: IO[bytes]) -> dict[str, Any]:
        options = super()._options(log)
        base = self.tmpdir
        options["env"] = {
            **os.environ,
            "HOME": str(base),  # the Erlang cookie
            "RABBITMQ_NODENAME": f"raffle{self.port}@localhost",
            "RABBITMQ_NODE_IP_ADDRESS": LOOPBACK,
            "RABBITMQ_NODE_PORT": str(self.port),
            "RABBITMQ_DIST_PORT": str(self.dist_port),
            "RABBITMQ_MNESIA_BASE": str(self.datadir),
            "RABBITMQ_LOG_BASE": str(base / "log"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(base / "enabled_plugins"),
            "RABBITMQ_CONFIG_FILE": str(base / "rabbitmq.conf"),
            "RABBITMQ_ADVANCED_CONFIG_FILE": str(base / "advanced.config"),
            "RABBITMQ_CONF_ENV_FILE": str(base / "rabbitmq-env.conf"),
            "RABBITMQ_PID_FILE": str(base / "rabbitmq.pid"),
        }
        return options

    @property
    def dist_port(self) -> int:
        if not hasattr(self, "_dist_port"):
            self._dist_port = free_port()
        return self._dist_port

    def _ready(self) -> bool:
        # The AMQP 0-9-1 protocol header is answered by connection.start (a method frame).
        with socket.create_connection((LOOPBACK, self.port), 1) as sock:
            sock.settimeout(2)
            sock.sendall(b"AMQP\x00\x00\x09\x01")
            return sock.recv(8)[:1] == b"\x01"


class RedisClusterNode(RedisServer):
    """A master of a throwaway Redis Cluster; its nodes.conf stays in its directory, so a
    restart rejoins the cluster with the same slots (and, with no persistence, no data)."""

    kind = "redis-cluster-node"

    def _command(self) -> list[str]:
        cluster = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
        # A bus port of its own: the default, port + 10000, may be taken or past 65535.
        bus = ["--cluster-port", str(self.bus_port), "--cluster-node-timeout", "5000"]
        return [*super()._command(), *cluster, *bus]

    @property
    def bus_port(self) -> int:
        if not hasattr(self, "_bus_port"):
            self._bus_port = free_port()
        return self._bus_port


class RedisClusterServer:
    """Three masters (no replicas) made one cluster with ``redis-cli --cluster create``; the
    URL names the first, from which a cluster client finds the others."""

    kind = "redis-cluster"
    MASTERS = 3

    def __init__(self, startup_timeout: float = 60.0) -> None:
        self.cli = _require(shutil.which("redis-cli"), "redis-cli")
        self.nodes = [RedisClusterNode(startup_timeout) for _ in range(self.MASTERS)]
        self.startup_timeout = startup_timeout
        self.startup_seconds: float | None = None
        self._created = False

    @property
    def url(self) -> str:
        return self.nodes[0].url

    @property
    def running(self) -> bool:
        return all(node.running for node in self.nodes)

    @property
    def pid(self) -> tuple[int | None, ...]:
        """The masters' processes: a restart of any changes it."""
        return tuple(node.pid for node in self.nodes)

    def start(self) -> None:
        """Start the masters that are down; create the cluster the first time; wait until
        every master says the cluster is ok."""
        began = time.monotonic()
        for node in self.nodes:
            node.start()
        if not self._created:
            addresses = [f"{LOOPBACK}:{node.port}" for node in self.nodes]
            create = [self.cli, "--cluster", "create", *addresses, "--cluster-replicas", "0"]
            self._cli([*create, "--cluster-yes"], "cluster create")
            self._created = True
        self._wait_ok()
        self.startup_seconds = time.monotonic() - began

    def kill(self) -> None:
        for node in self.nodes:
            node.kill()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        for node in self.nodes:
            node.close()

    def _cli(self, args: list[str], what: str) -> str:
        done = subprocess.run(args, check=False, capture_output=True, timeout=60)
        if done.returncode != 0:
            output = (done.stdout + done.stderr).decode(errors="replace")
            raise ServiceUnavailable(f"{self.kind} {what} failed:\n{output}")
        return done.stdout.decode(errors="replace")

    def _wait_ok(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            states = [self._state(node) for node in self.nodes]
            if states == ["ok"] * len(self.nodes):
                return
            time.sleep(0.05)
        raise ServiceUnavailable(f"{self.kind} not ok after {self.startup_timeout:.0f}s")

    def _state(self, node: RedisClusterNode) -> str:
        address = ["-h", LOOPBACK, "-p", str(node.port)]
        with contextlib.suppress(ServiceUnavailable, subprocess.TimeoutExpired):
            for line in self._cli([self.cli, *address, "cluster", "info"], "info").splitlines():
                if line.startswith("cluster_state:"):
                    return line.partition(":")[2].strip()
        return "unknown"
