# FanWhy in a container. Builds without a GPU; at run time the NVIDIA container toolkit mounts the driver.
#   docker build -t fanwhy .
#   docker run --gpus all --pid=host -p 8090:8090 -e FANWHY_TOKEN=$(openssl rand -hex 16) fanwhy
# Binding 0.0.0.0 (needed behind -p) requires FANWHY_TOKEN; without one FanWhy refuses to start and says why.
# --pid=host lets FanWhy name the processes NVML reports (their PIDs are the host's).
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=utility \
    FANWHY_HOST=0.0.0.0 FANWHY_PORT=8090

WORKDIR /opt/fanwhy
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY app ./app
COPY static ./static
COPY templates ./templates

EXPOSE 8090
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD python -c "import json,os,urllib.request as u; r=u.Request('http://127.0.0.1:8090/api/health', headers={'Authorization': 'Bearer ' + os.environ.get('FANWHY_TOKEN', '')}); exit(0 if json.load(u.urlopen(r, timeout=4))['status'] != 'down' else 1)"
CMD ["python", "-m", "app"]
