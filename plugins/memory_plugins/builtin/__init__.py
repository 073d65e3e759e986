"""First-party registrations: one thin @hookimpl module per port family.

Every open loads every registration module, but only the plugins the settings name need
their libraries, so a factory imports its adapter when it runs, never at module level:
discovery importing them all cost ~0.7 s per open (issue 15). Annotations name the port.
"""
