# FanWhy: `make run` serves the dashboard, `make test` passes the tests. Both set themselves up.
PYTHON ?= python3
# Bytecode is cached (in __pycache__, ignored by git) even where the environment asks Python not to write it: the
# tests start about 150 Python processes, and each would compile app/ and the test modules again.
unexport PYTHONDONTWRITEBYTECODE
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip

.PHONY: run demo snapshot test check lint gpu-test mutation clean

$(VENV)/.runtime: requirements.txt requirements.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --disable-pip-version-check --require-hashes -r requirements.lock
	touch $@

$(VENV)/.dev: requirements-dev.txt requirements.txt requirements-queue.txt $(VENV)/.runtime
	$(PIP) install -q --disable-pip-version-check -r requirements-dev.txt
	touch $@

run: $(VENV)/.runtime  ## serve the dashboard on http://127.0.0.1:8090/
	@if [ -n "$$FANWHY_MESSAGE_QUEUE" ]; then $(PIP) install -q --disable-pip-version-check -r requirements-queue.txt; fi
	$(PY) -m app

demo: $(VENV)/.runtime  ## the dashboard on a simulated GPU whose load is real child processes
	FANWHY_BACKEND=simulated $(PY) -m app

snapshot: $(VENV)/.runtime
	$(PY) -m app snapshot

# Debian packages the tests drive for real: chromium (the page), nginx (a reverse proxy in front), node and java
# (processes the table names), zsh and groff (completion and the man page), prometheus (promtool and a real
# Prometheus for the fleet), redis-server (the Socket.IO message queue);
# podman, runc, mmdebstrap and openssl build and run the container image (tests/system/test_image.py); iproute2 makes
# "another host" (a network namespace and a veth pair: tests/support/netns.py). Installed when
# root and missing; otherwise the tests that need them are skipped, saying why.
DEBS := chromium:chromium prometheus:promtool redis-server:redis-server podman:podman runc:runc mmdebstrap:mmdebstrap \
        nodejs:node default-jre-headless:java nginx-light:nginx zsh:zsh groff-base:groff \
        openssl:openssl iproute2:ip

.PHONY: debs
debs:
	@missing=""; for pair in $(DEBS); do pkg=$${pair%%:*}; bin=$${pair##*:}; \
	  command -v $$bin >/dev/null 2>&1 || missing="$$missing $$pkg"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian packages for the tests:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "missing and not root:$$missing (their tests will be skipped)"; fi; fi

lint: $(VENV)/.dev  ## ruff, then mypy: strict on app/, normal on tests/ and benchmarks/ ([tool.mypy] in pyproject.toml)
	$(PY) -m ruff check app tests benchmarks
	$(PY) -m mypy

test: $(VENV)/.dev debs lint  ## ruff, then every test (GPU tests skip without a GPU, saying why)
	FANWHY_TEST_SAMPLE=1 $(PY) -m pytest -ra  # generated populations whole, whatever the environment says

# The fast loop (about 55 s on the 2-core VM once the venv exists, as fast as the VM runs: docs/TESTING.md): lint
# and types, then the unit and integration tiers together in six processes (the integration tests mostly wait on
# servers and ticks, so six keep two cores busy; an idle process takes tests queued on a busy one, so a long test
# near the end does not hold the run; tests that measure CPU rates hold them to the burner's own /proc
# account, so they pass beside the others). Generated populations are sampled, every fifth member
# (tests/support/population.py); `make test` runs them whole.
# A test's tier is its folder (tests/conftest.py); `make test` (what CI runs) adds tests/system and runs one at a time.
check: $(VENV)/.dev lint
	FANWHY_TEST_SAMPLE=5 $(PY) -m pytest -q -n 6 --dist worksteal -p no:cacheprovider tests/unit tests/integration

# Mutation testing of the core rules ([tool.mutmut] in pyproject.toml names the modules and their tests); about 3
# minutes on the 2-core VM, so not part of `make test`. Prints the score per module.
mutation: $(VENV)/.dev
	$(PIP) install -q --disable-pip-version-check mutmut==3.8.1
	rm -rf mutants
	$(PY) -m mutmut run > /dev/null
	$(PY) -m mutmut results --all true | $(PY) benchmarks/mutation_score.py

gpu-test: $(VENV)/.dev
	$(PY) -m pytest -m gpu -ra tests/gpu

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
