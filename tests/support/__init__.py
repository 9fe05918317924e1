"""What several test files share: builders of model objects, servers on loopback."""
