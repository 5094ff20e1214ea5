"""The Ostara portal: the Django project and its apps."""
