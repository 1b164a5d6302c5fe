-- Sites seeded before partitions existed: the same function as crawler_queue::part_of.
UPDATE sites SET part = CONV(LEFT(SHA2(host, 256), 4), 16, 10) % 1024;
