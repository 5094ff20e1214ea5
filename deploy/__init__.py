"""The deploy scripts (shell); Python only for their tests."""
