-- When a holder's share of an address shrinks (another worker joins it), the starts it made at
-- its larger share may still be in the one-second window the newcomer's first start is judged
-- in (crates/check/src/addresses.rs, `Address::set_share`). It writes here, before it
-- acknowledges the read that counted the newcomer, when they are out (the database's clock,
-- ms): at once when its starts were already spaced as its new share spaces them. A newcomer
-- confirmed by every holder starts no earlier than the latest `clear_at` of the address's
-- holders, rather than a whole second after its confirmation.
ALTER TABLE address_holders ADD COLUMN clear_at BIGINT NULL;
