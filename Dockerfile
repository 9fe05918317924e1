# FanWhy in a container. Builds without a GPU; at run time the NVIDIA container toolkit mounts the driver.
#
#   docker build -t fanwhy:0.9.0 .                 (or: --build-arg BASE=<any Debian/Ubuntu image with python3-venv>)
#   podman build --format docker -t fanwhy:0.9.0 . (podman's default OCI format would drop the HEALTHCHECK)
#
# Behind a proxy: --build-arg HTTPS_PROXY=http://proxy:3128 (and HTTP_PROXY, NO_PROXY; pip follows them). Through a
# package mirror: --build-arg PIP_INDEX_URL=https://mirror.example/simple. A private CA: with podman, mount the host's
# bundle over the image's (-v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro) and pass
# --build-arg PIP_CERT=/etc/ssl/certs/ca-certificates.crt (docs/DEPLOYMENT.md).
#
# Attribution mode 1, the host's PID namespace (NVML's PIDs are then FanWhy's own):
#   docker run -d --gpus all --pid=host -p 8090:8090 -e FANWHY_TOKEN="$(cat fanwhy.token)" fanwhy:0.9.0
# Attribution mode 2, the host's /proc mounted read-only, and the Docker socket for container names:
#   docker run -d --gpus all -p 8090:8090 -e FANWHY_TOKEN=... \
#     -v /proc:/host/proc:ro -e FANWHY_HOST_PROC=/host/proc \
#     -v /var/run/docker.sock:/var/run/docker.sock:ro fanwhy:0.9.0
# Only the exporter: append `python -m app exporter` (port EXPORTER_PORT, 9201); the health check follows it.
#
# Binding 0.0.0.0 (needed behind -p) requires a FANWHY_TOKEN that is a secret (`openssl rand -hex 16 > fanwhy.token`):
# without one, or with a placeholder, FanWhy refuses to start and says why. It runs as the numeric user 10001 (runAsNonRoot can check it); /dev/nvidia* from the toolkit
# are world-readable. Reading other users' command lines in mode 2 may need `--user 0` (or --cap-add SYS_PTRACE).
ARG BASE=python:3.12-slim
FROM ${BASE}
# pip reads these from the environment when they are given (a mirror, a private CA's bundle); unset otherwise
ARG PIP_INDEX_URL
ARG PIP_CERT

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PATH=/opt/fanwhy/venv/bin:$PATH \
    NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=utility \
    FANWHY_HOST=0.0.0.0 FANWHY_PORT=8090 FANWHY_DB=/var/lib/fanwhy/history.db

WORKDIR /opt/fanwhy
COPY requirements.lock .
RUN python3 -m venv /opt/fanwhy/venv \
 && /opt/fanwhy/venv/bin/pip install --no-cache-dir --disable-pip-version-check --require-hashes -r requirements.lock \
 && useradd --system --uid 10001 --user-group --home-dir /var/lib/fanwhy --create-home --shell /usr/sbin/nologin fanwhy
COPY app ./app
COPY static ./static
COPY templates ./templates

USER 10001:10001
VOLUME /var/lib/fanwhy
EXPOSE 8090 9201
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s CMD ["python", "-m", "app.healthcheck"]
CMD ["python", "-m", "app"]
