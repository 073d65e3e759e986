"""First-party registrations: one thin @hookimpl module per port family."""
