# FanWhy in a container. Builds without a GPU; at run time the NVIDIA container toolkit mounts the driver.
#
#   docker build -t fanwhy .
#
# Attribution mode 1, the host's PID namespace (NVML's PIDs are then FanWhy's own):
#   docker run -d --gpus all --pid=host -p 8090:8090 -e FANWHY_TOKEN=$(openssl rand -hex 16) fanwhy
# Attribution mode 2, the host's /proc mounted read-only, and the Docker socket for container names:
#   docker run -d --gpus all -p 8090:8090 -e FANWHY_TOKEN=... \
#     -v /proc:/host/proc:ro -e FANWHY_HOST_PROC=/host/proc \
#     -v /var/run/docker.sock:/var/run/docker.sock:ro fanwhy
#
# Binding 0.0.0.0 (needed behind -p) requires FANWHY_TOKEN: without one FanWhy refuses to start and says why.
# It runs as an unprivileged user; /dev/nvidia* from the toolkit are world-readable. Reading other users'
# command lines in mode 2 may need `--user 0` (or --cap-add SYS_PTRACE): without it they show as denied rows.
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=utility \
    FANWHY_HOST=0.0.0.0 FANWHY_PORT=8090 FANWHY_DB=/var/lib/fanwhy/history.db

WORKDIR /opt/fanwhy
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt \
 && useradd --system --home-dir /var/lib/fanwhy --create-home --shell /usr/sbin/nologin fanwhy
COPY app ./app
COPY static ./static
COPY templates ./templates

USER fanwhy
VOLUME /var/lib/fanwhy
EXPOSE 8090
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD python -c "import os,sys,urllib.request as u; r=u.Request('http://127.0.0.1:8090/api/health', headers={'Host': 'localhost', 'Authorization': 'Bearer ' + os.environ.get('FANWHY_TOKEN', '')}); sys.exit(0 if u.urlopen(r, timeout=4).status == 200 else 1)"
CMD ["python", "-m", "app"]
