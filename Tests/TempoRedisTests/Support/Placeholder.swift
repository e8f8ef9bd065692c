// The Redis suites' support (a RESP client, a redis-server started per suite) lives here.
