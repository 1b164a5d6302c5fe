-- Soft 404s (--soft-404): why a site is dead when its status does not say so, and the answer
-- each host gave to a path that cannot exist, so that the fleet probes a host and path shape
-- once (reused for 24 hours), whichever worker holds the host next.
ALTER TABLE sites ADD COLUMN detail TEXT NULL;

CREATE TABLE IF NOT EXISTS soft404_probes (
    host        VARCHAR(255)  NOT NULL,
    -- scheme://authority/dir/*.ext: the directory (two levels at most) and extension probed;
    -- (255 + 512) x 4 bytes fits the 3,072-byte key. Paths are case-sensitive: compared as
    -- bytes (the other columns keep the default collation, which sqlx reads as text).
    pattern     VARCHAR(512)  COLLATE utf8mb4_bin NOT NULL,
    -- The path probed (a random token in that directory, with that extension).
    probe_path  VARCHAR(1024) NOT NULL,
    -- The probe's final status; NULL when it got no answer (then nothing is judged by it).
    status      INT           NULL,
    final_url   TEXT          NULL,
    redirects   INT           NOT NULL DEFAULT 0,
    -- Word 3-shingles of the visible text that two probes shared, 8 bytes each; NULL when the
    -- body was not text.
    fingerprint MEDIUMBLOB    NULL,
    -- Shingles one probe had beyond those: how much the host's not-found page varies.
    spread      INT           NOT NULL DEFAULT 0,
    noindex     TINYINT       NOT NULL DEFAULT 0,
    probed_at   BIGINT        NOT NULL,
    PRIMARY KEY (host, pattern)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
