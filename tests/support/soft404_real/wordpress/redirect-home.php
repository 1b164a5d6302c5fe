<?php
/*
 * Plugin Name: 404 to home
 * Description: Sends every "page not found" to the home page with a 301, as the "redirect
 * all 404s to the homepage" plugins do. It runs after WordPress's own redirect_canonical(),
 * which first guesses a post for a mistyped slug. A mu-plugin of the soft-404 corpus
 * (tests/support/soft404_real/wordpress.rs).
 */

add_action('template_redirect', function () {
    if (is_404()) {
        wp_safe_redirect(home_url('/'), 301);
        exit;
    }
}, 99);
