"""Attribution: which process, user and container is behind the load."""
