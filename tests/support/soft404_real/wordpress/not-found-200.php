<?php
/*
 * Plugin Name: Friendly 404
 * Description: Shows the theme's "page not found" with 200 OK, as a "custom 404 page" set up
 * to keep visitors (and search engines) on the site often does. A mu-plugin of the
 * soft-404 corpus (tests/support/soft404_real/wordpress.rs).
 */

add_action('template_redirect', function () {
    if (is_404()) {
        status_header(200);
    }
}, 99);
