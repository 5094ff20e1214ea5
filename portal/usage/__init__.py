"""Usage by owner: who fills each filesystem and when they reach their quota (issue 35)."""
