"""Attribution: which process, user and container is behind the load, from /proc, cgroups, the Docker Engine API
and the Kubernetes API.

Attribution layer: may import core and the other attribution modules, nothing else."""
