//! The corpus's configurations: a server ([`Server`]) and what it answers for a path it has no
//! file for ([`Missing`]), each of [`ALL`] named.

/// The server software behind a configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Server {
    Nginx,
    Apache,
    Lighttpd,
    Caddy,
    /// MediaWiki behind nginx and php-fpm.
    MediaWiki,
    /// WordPress behind nginx and php-fpm, on MariaDB.
    WordPress,
}

impl Server {
    /// The Debian binary that runs it.
    pub fn binary(self) -> &'static str {
        match self {
            Server::Nginx => "/usr/sbin/nginx",
            Server::Apache => "/usr/sbin/apache2",
            Server::Lighttpd => "/usr/sbin/lighttpd",
            Server::Caddy => "/usr/bin/caddy",
            Server::MediaWiki => "/usr/share/mediawiki/index.php",
            Server::WordPress => WORDPRESS_INSTALLED,
        }
    }

    /// The Debian package of [`Server::binary`].
    pub fn package(self) -> &'static str {
        match self {
            Server::Nginx => "nginx-light",
            Server::Apache => "apache2",
            Server::Lighttpd => "lighttpd",
            Server::Caddy => "caddy",
            Server::MediaWiki => "mediawiki",
            Server::WordPress => "wordpress",
        }
    }
}

/// What a configuration answers for a path it has no file for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Missing {
    /// 404 (a hard 404: dead by its status).
    Honest,
    /// 200, the app shell `/index.html` (`try_files $uri /index.html`, `FallbackResource`).
    Spa,
    /// 200, a "page not found" page (`error_page 404 =200 /notfound.html`).
    NotFound200,
    /// A redirect to `/`.
    Home,
    /// A redirect to `/login?next=…`.
    Login,
    /// A wiki's "there is currently no text in this page", 200.
    Wiki200,
    /// The same, 404 (MediaWiki's default).
    Wiki404,
}

/// One server configured one way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub name: &'static str,
    pub server: Server,
    pub missing: Missing,
}

const fn config(name: &'static str, server: Server, missing: Missing) -> Config {
    Config {
        name,
        server,
        missing,
    }
}

/// Every configuration of the corpus.
pub const ALL: [Config; 18] = [
    config("nginx-honest", Server::Nginx, Missing::Honest),
    config("nginx-spa", Server::Nginx, Missing::Spa),
    config("nginx-200", Server::Nginx, Missing::NotFound200),
    config("nginx-login", Server::Nginx, Missing::Login),
    config("apache-honest", Server::Apache, Missing::Honest),
    config("apache-spa", Server::Apache, Missing::Spa),
    config("apache-200", Server::Apache, Missing::NotFound200),
    config("apache-home", Server::Apache, Missing::Home),
    config("lighttpd-spa", Server::Lighttpd, Missing::Spa),
    config("lighttpd-200", Server::Lighttpd, Missing::NotFound200),
    config("caddy-spa", Server::Caddy, Missing::Spa),
    config("caddy-home", Server::Caddy, Missing::Home),
    config("caddy-login", Server::Caddy, Missing::Login),
    config("mediawiki-200", Server::MediaWiki, Missing::Wiki200),
    config("mediawiki-404", Server::MediaWiki, Missing::Wiki404),
    config("wordpress-404", Server::WordPress, Missing::Honest),
    config("wordpress-200", Server::WordPress, Missing::NotFound200),
    config("wordpress-home", Server::WordPress, Missing::Home),
];

/// Debian's WordPress and its default theme (`apt-get install wordpress
/// wordpress-theme-twentytwentythree php-fpm`).
const WORDPRESS_INSTALLED: &str = "/usr/share/wordpress/wp-content/themes/twentytwentythree";
