"""Message brokers behind the Broker port: in-process (embedded) and RabbitMQ (production)."""
