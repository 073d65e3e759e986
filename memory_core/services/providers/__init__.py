"""Provider calls: the gateway, its circuit breaker and adaptive deadlines."""
