"""Events to server-sent-event streams and the recent-decisions feed (docs/gateway.md#server-sent-events)."""
