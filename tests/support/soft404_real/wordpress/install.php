<?php
// Installs a WordPress blog and its content, as an admin would with the installer and the
// editor: `php install.php DOCROOT SITE_JSON` (run by ../wordpress.rs). DOCROOT's
// wp-config.php names the site and its database; SITE_JSON lists categories, posts and pages.

[, $root, $site] = $argv;
$site = json_decode(file_get_contents($site), true);

// wp_install() mails the admin a notice: there is no MTA here.
function wp_new_blog_notification() {}

define('WP_INSTALLING', true);
require $root . '/wp-load.php';
require ABSPATH . 'wp-admin/includes/upgrade.php';

$installed = wp_install('Acme Blog', 'admin', 'admin@example.com', true, '', 'correct-horse-battery-9');
if (is_wp_error($installed)) {
    fwrite(STDERR, $installed->get_error_message() . "\n");
    exit(1);
}

// Settings > Permalinks > "Post name".
global $wp_rewrite;
$wp_rewrite->set_permalink_structure('/%postname%/');

function must($id) {
    if (is_wp_error($id) || !$id) {
        fwrite(STDERR, (is_wp_error($id) ? $id->get_error_message() : 'failed') . "\n");
        exit(1);
    }
    return $id;
}

$categories = [];
foreach ($site['categories'] as $name) {
    $categories[$name] = must(wp_insert_term($name, 'category'))['term_id'];
}
foreach ($site['posts'] as $post) {
    $id = must(wp_insert_post([
        'post_title' => $post['title'],
        'post_name' => $post['slug'],
        'post_content' => $post['text'],
        'post_status' => 'publish',
        'post_date' => $post['date'],
        'post_category' => [$categories[$post['category']]],
        'tags_input' => $post['tags'],
    ], true));
    // A slug changed after publishing: WordPress keeps the old one (`_wp_old_slug`) and
    // redirects it to the new.
    if (!empty($post['renamed_to'])) {
        must(wp_update_post(['ID' => $id, 'post_name' => $post['renamed_to']], true));
    }
}
$pages = [];
foreach ($site['pages'] as $page) {
    $pages[$page['title']] = must(wp_insert_post([
        'post_type' => 'page',
        'post_title' => $page['title'],
        'post_content' => $page['text'],
        'post_status' => 'publish',
        'post_parent' => empty($page['parent']) ? 0 : $pages[$page['parent']],
    ], true));
}
// The rules are built on the first request: this process registered the taxonomies before
// the permalink structure was set, so rules built here would lack /category/ and /tag/.
delete_option('rewrite_rules');
