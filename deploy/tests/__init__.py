"""Tests of the deploy scripts and the production install."""
