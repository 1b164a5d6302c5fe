-- Fragments (`page#section`, crates/queue/src/anchors.rs): a link to a section of a page is a
-- site of its own, whose URL keeps its fragment; it takes its page's verdict and says whether
-- the page has the section: `fragment` is 'found' or 'missing' (NULL for every other site, and
-- for a fragment whose page was not alive HTML: then the page's verdict says it all).
ALTER TABLE sites ADD COLUMN fragment VARCHAR(8) NULL;

-- Whether a crawl checks the fragments of the links it finds (`crawler-seed --no-fragments`
-- clears it).
ALTER TABLE crawls ADD COLUMN fragments TINYINT NOT NULL DEFAULT 1;

-- A page's anchors (its ids and `<a name>`s), read once for the fleet when a fragment of it is
-- asked, keyed by the page's URL without fragment (its url_key, as sites'), with the page's
-- own result, which its fragments take. `anchors` is one a line; NULL when the page was not
-- read (not alive, not HTML): nothing to look in.
CREATE TABLE IF NOT EXISTS anchors (
    page_key    BINARY(16)  NOT NULL,
    page_url    TEXT        NOT NULL,
    verdict     VARCHAR(16) NOT NULL,
    http_status INT         NULL,
    error_kind  VARCHAR(32) NULL,
    final_url   TEXT        NULL,
    redirects   INT         NOT NULL DEFAULT 0,
    anchors     MEDIUMTEXT  NULL,
    read_at     BIGINT      NOT NULL,
    PRIMARY KEY (page_key)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
