//! The soft-404 corpus's hosts and pages: what kind of host each is, which of its paths are
//! real, what each answers, and the label of every URL (see `soft404_site.rs`).

use std::collections::HashSet;

/// How a host treats a path it does not have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// 404: the honest host (its missing pages are dead by status, not soft 404s).
    Honest,
    /// 200, a "page not found" template in the host's heavy layout, echoing the path, in a
    /// language (en, de, fr, es, ru, ja) and with a request id that changes every time.
    Template(&'static str),
    /// 302 to `/`; `/index.html` is a real page that redirects to `/` too.
    RedirectHome,
    /// 302 to `/login?next=PATH`.
    RedirectLogin,
    /// 200, the same app shell for every path; only `/` is labelled real (a shell's real
    /// routes cannot be told from its missing ones over HTTP).
    Spa,
    /// 302 to `/error?code=404&from=PATH`, 302 to `/notfound.html`, 200 "not found".
    Chain,
    /// Missing paths 200 "not found" (en); `/search?q=…` pages whose results differ, one
    /// with no results at all.
    Search,
    /// 200, the home page's text, for any missing path (no redirect, no "not found").
    HomeForAll,
    /// As `Template("en")`, and every page (the not-found one included) lists 18 words
    /// "popular now" that change with every request.
    Noisy,
}

impl Kind {
    /// Every kind, the template in each language.
    pub const ALL: [Kind; 14] = [
        Kind::Honest,
        Kind::Template("en"),
        Kind::Template("de"),
        Kind::Template("fr"),
        Kind::Template("es"),
        Kind::Template("ru"),
        Kind::Template("ja"),
        Kind::RedirectHome,
        Kind::RedirectLogin,
        Kind::Spa,
        Kind::Chain,
        Kind::Search,
        Kind::HomeForAll,
        Kind::Noisy,
    ];
}

/// What a URL of the corpus is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Label {
    /// A real page: must not be reported dead.
    Real,
    /// A missing page that does not answer 404: must be `dead`/`soft_404`.
    Soft404,
    /// A missing page answering 404: `dead` by its status.
    Hard404,
}

/// One host's paths: those it has, and those the list asks for with their labels.
pub struct HostPages {
    pub kind: Kind,
    pub real: HashSet<String>,
    pub listed: Vec<(String, Label)>,
}

const WORDS: &[&str] = &[
    "garden", "widget", "river", "copper", "lantern", "harbor", "meadow", "signal", "pepper",
    "marble", "violet", "canyon", "orbit", "thunder", "velvet", "ember", "falcon", "glacier",
    "hollow", "island", "jasper", "kettle", "lemon", "magnet", "nectar", "oyster", "pillow",
    "quartz", "ribbon", "saddle", "timber", "umbrella", "vessel", "walnut", "yonder", "zephyr",
    "anchor", "basket", "candle", "dragon", "engine", "forest", "goblet", "hammer", "ivory",
    "jungle", "kitten", "ladder", "mirror", "needle", "outlet", "parrot", "quiver", "rocket",
];

/// A deterministic word sequence for `seed`: page text that differs between pages.
pub fn words(seed: &str, n: usize) -> String {
    let mut x = seed.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        out.push(WORDS[(x >> 33) as usize % WORDS.len()]);
    }
    out.join(" ")
}

/// The host's heavy layout around `main`: a long menu, a sidebar and a footer (some 250 words
/// that every page shares), so that real pages and the not-found page differ by little.
pub fn layout(host: usize, title: &str, main: &str) -> String {
    let nav = words(&format!("nav{host}"), 120);
    let side = words(&format!("side{host}"), 60);
    let foot = words(&format!("foot{host}"), 70);
    format!(
        "<!doctype html><html><head><title>{title}</title>\
         <script>window.cfg = {{id: {host}}};</script><style>body {{margin: 0}}</style></head>\
         <body><nav>{nav}</nav><aside>{side}</aside><main>{main}</main>\
         <footer>{foot}</footer></body></html>"
    )
}

/// The "not found" message in `lang`, echoing `path`, with a request id.
pub fn not_found(host: usize, lang: &str, path: &str, request_id: u64) -> String {
    let (title, text) = match lang {
        "de" => (
            "Seite nicht gefunden",
            format!("Die Seite {path} existiert leider nicht."),
        ),
        "fr" => (
            "Page introuvable",
            format!("La page {path} est introuvable sur ce site."),
        ),
        "es" => (
            "Página no encontrada",
            format!("La página {path} no existe en este sitio."),
        ),
        "ru" => (
            "Страница не найдена",
            format!("Страница {path} не найдена на этом сайте."),
        ),
        "ja" => (
            "ページが見つかりません",
            format!("お探しのページ {path} は見つかりません。"),
        ),
        _ => (
            "Page not found",
            format!("Sorry, the page {path} could not be found."),
        ),
    };
    layout(
        host,
        title,
        &format!("<h1>{title}</h1><p>{text}</p><p>Request id {request_id:x}</p>"),
    )
}

/// A real page: its own text, in the host's layout.
pub fn real_page(host: usize, path: &str) -> String {
    let text = if path.contains("contact") {
        "Call us at 555 0100".to_owned() // a real page with almost no text of its own
    } else {
        words(path, 80)
    };
    layout(
        host,
        &words(&format!("title{path}"), 3),
        &format!("<p>{text}</p>"),
    )
}

/// A search page: results that depend on the query; none for `zzzqqq`.
pub fn search_page(host: usize, query: &str) -> String {
    let results = if query == "zzzqqq" {
        format!("No results for {query}. Try another search.")
    } else {
        (0..10)
            .map(|i| format!("<li>{}</li>", words(&format!("{query}{i}"), 8)))
            .collect()
    };
    layout(
        host,
        "Search",
        &format!("<h1>Results for {query}</h1><ul>{results}</ul>"),
    )
}

/// The single-page app's shell, the same for every path.
pub const SPA_SHELL: &str = "<!doctype html><html><head><title>Acme app</title>\
    <script defer src=\"/static/js/main.4f9c2a.js\"></script></head><body>\
    <noscript>You need to enable JavaScript to run this app.</noscript>\
    <div id=\"root\"></div></body></html>";

/// Host `host`'s pages: `n` real and `n` missing in each of three patterns, and the extras of
/// its kind.
pub fn host_pages(host: usize, kind: Kind, n: usize) -> HostPages {
    let missing_label = match kind {
        Kind::Honest => Label::Hard404,
        _ => Label::Soft404,
    };
    let mut real = HashSet::from(["/".to_owned()]);
    let mut listed = vec![("/".to_owned(), Label::Real)];
    for i in 0..n {
        let name = |salt: &str| words(&format!("{salt}{host}-{i}"), 2).replace(' ', "-");
        let paths = [
            format!("/docs/{}-{i}.html", name("d")),
            format!("/blog/{}-{i}", name("b")),
            format!("/shop/{}-{i}.php", name("s")),
        ];
        let gone = [
            format!("/docs/old-{}-{i}.html", name("od")),
            format!("/blog/old-{}-{i}", name("ob")),
            format!("/shop/old-{}-{i}.php", name("os")),
        ];
        if kind != Kind::Spa {
            real.extend(paths.iter().cloned());
            listed.extend(paths.into_iter().map(|p| (p, Label::Real)));
        }
        listed.extend(gone.into_iter().map(|p| (p, missing_label)));
    }
    if kind != Kind::Spa {
        let contact = "/docs/contact.html".to_owned();
        real.insert(contact.clone());
        listed.push((contact, Label::Real));
    }
    let extras: &[&str] = match kind {
        Kind::RedirectHome => &["/index.html"],
        Kind::RedirectLogin => &["/login"],
        Kind::Search => &["/search?q=garden", "/search?q=copper", "/search?q=zzzqqq"],
        _ => &[],
    };
    listed.extend(extras.iter().map(|p| (p.to_string(), Label::Real)));
    HostPages { kind, real, listed }
}
