"""The command line's parts: the terminal answer's tables, and the checks made before serving (the history
path, the port, a backend named by the user).

Assembly layer: may import every layer."""
