-- Fragments held for their page (crates/queue/src/anchors.rs): a link to a section of a page
-- of a crawl that is still to be read is added not due (`next_check_at` later by a hold), and
-- listed here with its page; when the page's read stores its anchors, the same write makes its
-- held fragments due and drops their rows. So a fragment is not claimed before its page is
-- read, and never waits for it in a worker. The hold's end is only the fallback of a page that
-- stores no anchors (robots.txt forbids it, its read keeps failing).
CREATE TABLE IF NOT EXISTS fragment_holds (
    page_key BINARY(16) NOT NULL,
    site_key BINARY(16) NOT NULL,
    PRIMARY KEY (page_key, site_key)
) ENGINE = InnoDB;
