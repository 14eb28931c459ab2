"""From a component to CPE names, with the reason and a confidence for each.

The rules, in order; the first that gives a name decides (docs/scan.md):

1. **cpe** (confidence 1.0): a CPE the input gives (CycloneDX `cpe`, SPDX `cpe23Type` or
   `cpe22Type`). A CPE 2.2 URI is converted to 2.3; a CPE without a version takes the
   component's version.
2. **purl** (0.9) and **repository** (0.8): the CPE dictionary products whose reference
   links point at the component's registry page (from its purl: PyPI, npm, RubyGems,
   crates.io, Maven Central, Go, NuGet, Packagist) or at its source repository (a
   `pkg:github`/`pkg:bitbucket`/`pkg:gitlab` purl, a Go module on a forge, or the
   repository the input names). Links are compared without scheme, `www.`, trailing
   `/` or `.git`; a link deeper under the same path counts (`…/owner/repo/releases`).
3. **name** (0.6, 0.5 or 0.3): vendor/product name rules. The product is the package name
   (lower case; also with `-` and `.` as `_`); the vendors are those the dictionary and
   the CVE criteria use with that product. A vendor equal to a hint from the purl (the
   namespace's last dotted part or scope, or the name itself) gives 0.6; a single vendor
   0.5; two or three vendors each 0.3; more are too ambiguous and the component is
   left unidentified.

A component without a version cannot be placed in any range and is left unidentified;
so is one no rule gives a name for. Identification looks names up through a
`VulnerabilitySource` and remembers every answer for the rest of the scan.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final
from urllib.parse import unquote

from assay.audit.model import Component, Identification
from assay.audit.source import VulnerabilitySource
from assay.errors import InputError
from assay.nvd.cpe import ANY, Cpe, parse_cpe
from assay.osv.names import Purl, parse_purl

__all__ = [
    "CONFIDENCE",
    "Identifier",
    "cpe_for",
    "normalize_link",
    "parse_given_cpe",
    "parse_purl",
    "readable_purl",
    "registry_links",
]

CONFIDENCE: Final = {
    "cpe": 1.0,
    "purl": 0.9,
    "repository": 0.8,
    "name-hint": 0.6,
    "name-single": 0.5,
    "name-ambiguous": 0.3,
}
MAX_AMBIGUOUS_VENDORS: Final = 3
_FORGES: Final = ("github.com", "gitlab.com", "bitbucket.org")
_QUOTED: Final = re.compile(r"[^a-z0-9._\-]")


def _escaped(value: str) -> str:
    lowered = value.lower()
    return _QUOTED.sub(lambda m: "\\" + m.group(0), lowered)


def cpe_for(part: str, vendor: str, product: str, version: str) -> Cpe:
    """The CPE name of a product at a concrete version (escaped as CPE 2.3 wants)."""
    return parse_cpe(f"cpe:2.3:{part}:{vendor}:{product}:{_escaped(version)}", partial=True)


def parse_given_cpe(text: str) -> Cpe:
    """A CPE 2.3 formatted string, or a CPE 2.2 URI (`cpe:/a:vendor:product:1.0`)."""
    stripped = text.strip()
    if stripped.lower().startswith("cpe:/"):
        fields = stripped[5:].split(":")
        values = [unquote(v) for v in fields[:7]]
        values += [""] * (7 - len(values))
        part, vendor, product, version, update, edition, language = values
        sw_edition = target_sw = target_hw = other = ""
        if edition.startswith("~"):
            packed = edition[1:].split("~") + [""] * 5
            edition, sw_edition, target_sw, target_hw, other = packed[:5]
        components = [
            part, vendor, product, version, update, edition, language,
            sw_edition, target_sw, target_hw, other,
        ]  # fmt: skip
        return parse_cpe(
            "cpe:2.3:"
            + ":".join(_escaped(c) if c not in ("", "*", "-") else c for c in components),
            partial=True,
        )
    return parse_cpe(stripped, partial=True)


def normalize_link(url: str) -> str:
    """A link without scheme, `www.`, query, fragment, trailing `/` or `.git`, lower case."""
    text = url.strip().lower()
    text = text.split("#", 1)[0].split("?", 1)[0].removeprefix("git+")
    if "://" in text:
        text = text.split("://", 1)[1]
    if text.startswith("git@"):
        text = text[4:].replace(":", "/", 1)
    text = text.split("@", 1)[-1] if "@" in text.split("/", 1)[0] else text
    return text.removeprefix("www.").rstrip("/").removesuffix(".git")


def _pep503(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


_REGISTRY_PAGES: Final = {
    "pypi": ("pypi.org/project/{pep503}", "pypi.python.org/pypi/{pep503}"),
    "npm": ("npmjs.com/package/{full}",),
    "gem": ("rubygems.org/gems/{name}",),
    "cargo": ("crates.io/crates/{name}",),
    "maven": (
        "search.maven.org/artifact/{namespace}/{name}",
        "central.sonatype.com/artifact/{namespace}/{name}",
        "mvnrepository.com/artifact/{namespace}/{name}",
    ),
    "golang": ("pkg.go.dev/{full}",),
    "nuget": ("nuget.org/packages/{name}",),
    "composer": ("packagist.org/packages/{full}",),
}
"""Each purl type's registry pages: `{full}` is `namespace/name` (or the name alone)."""
_NAMESPACED: Final = ("maven",)
"""Types whose registry pages name the namespace: none without one."""
_FORGE_TYPES: Final = {"github": "github.com", "gitlab": "gitlab.com", "bitbucket": "bitbucket.org"}


def registry_links(purl: Purl) -> list[str]:
    """The registry pages of a package (normalized links, see `normalize_link`)."""
    name, namespace = purl.name, purl.namespace
    if purl.type in _NAMESPACED and not namespace:
        return []
    full = f"{namespace}/{name}" if namespace else name
    return [
        page.format(name=name, namespace=namespace, full=full, pep503=_pep503(name)).lower()
        for page in _REGISTRY_PAGES.get(purl.type, ())
    ]


def repository_links(purl: Purl | None, repository: str | None) -> list[str]:
    links: list[str] = []
    if purl is not None and purl.namespace:
        if purl.type in _FORGE_TYPES:
            links.append(f"{_FORGE_TYPES[purl.type]}/{purl.namespace}/{purl.name}".lower())
        elif purl.type == "golang" and purl.namespace.split("/", 1)[0] in _FORGES:
            links.append(f"{purl.namespace}/{purl.name}".lower())
    if repository:
        links.append(normalize_link(repository))
    return [link for link in dict.fromkeys(links) if "/" in link]


def _links_to(refs: Sequence[str], link: str) -> bool:
    # The link itself or a page under it ("/" appended to both so one test does both).
    return any((normalize_link(ref) + "/").startswith(link + "/") for ref in refs)


def _product_names(name: str) -> list[str]:
    lowered = name.strip().lower().replace(" ", "_")
    variants = [lowered, re.sub(r"[-.]", "_", lowered)]
    return [v for v in dict.fromkeys(variants) if v and _usable(v)]


def _usable(value: str) -> bool:
    try:
        parse_cpe(f"cpe:2.3:a:*:{_escaped(value)}", partial=True)
    except InputError:
        return False
    return True


def _vendor_hints(purl: Purl | None, name: str) -> list[str]:
    hints = [name.lower()]
    if purl is not None and purl.namespace:
        namespace = purl.namespace.lower().lstrip("@")
        hints.append(namespace.rsplit("/", 1)[-1])
        dotted = namespace.split(".")
        if len(dotted) > 1:
            hints.append(dotted[1] if dotted[0] in ("org", "com", "net", "io") else dotted[0])
    return [_escaped(h) for h in dict.fromkeys(hints) if h]


class Identifier:
    """Identifies components through a source's dictionary and criteria (with memory)."""

    def __init__(self, source: VulnerabilitySource) -> None:
        self.source = source
        self._by_link: dict[str, list[tuple[str, str, str]]] = {}
        self._vendors: dict[str, list[tuple[str, str]]] = {}

    def identify(self, component: Component) -> Identification | str:
        """The identification, or the reason there is none."""
        given = self._given(component)
        if given is not None:
            return given
        purl = readable_purl(component.purl)
        version = component.version or (purl.version if purl is not None else None)
        if not version:
            return "no version: it cannot be placed in any version range"
        linked = self._by_page(component, purl, version)
        if linked is not None:
            return linked
        return self._by_name(component, purl, version)

    def _by_page(
        self, component: Component, purl: Purl | None, version: str
    ) -> Identification | None:
        """The products whose dictionary entry links to the package's registry page, else
        to its source repository."""
        for link in registry_links(purl) if purl is not None else ():
            products = self._products(link)
            if products:
                return self._named(products, version, "purl", f"registry page {link}")
        for link in repository_links(purl, component.repository):
            products = self._products(link)
            if products:
                return self._named(products, version, "repository", f"source repository {link}")
        return None

    def _given(self, component: Component) -> Identification | None:
        names: list[str] = []
        problems: list[str] = []
        for text in component.cpes:
            try:
                cpe = parse_given_cpe(text)
            except InputError as error:
                problems.append(f"{text!r}: {error.reason}")
                continue
            if cpe.version == ANY and component.version:
                cpe = cpe._replace(version=_escaped(component.version))
            names.append(cpe.formatted())
        if not names:
            return None
        reason = "CPE given by the input"
        if problems:
            reason += "; ignored " + "; ".join(problems)
        return Identification(tuple(dict.fromkeys(names)), "cpe", CONFIDENCE["cpe"], reason)

    def _products(self, link: str) -> list[tuple[str, str, str]]:
        if link not in self._by_link:
            found: dict[tuple[str, str, str], None] = {}
            for product in self.source.products_with_reference(link):
                if _links_to(product.refs, link):
                    cpe = product.cpe
                    found[(cpe.part, cpe.vendor, cpe.product)] = None
            self._by_link[link] = list(found)
        return self._by_link[link]

    @staticmethod
    def _named(
        products: list[tuple[str, str, str]], version: str, how: str, why: str
    ) -> Identification:
        names = tuple(
            cpe_for(part, vendor, product, version).formatted()
            for part, vendor, product in products
        )
        return Identification(
            names, how, CONFIDENCE[how], f"CPE dictionary product linking to its {why}"
        )

    def _vendors_of(self, product: str) -> list[tuple[str, str]]:
        if product not in self._vendors:
            self._vendors[product] = [
                (part, vendor)
                for part, vendor in self.source.vendors_of(product)
                if part in ("a", ANY)
            ]
        return self._vendors[product]

    def _by_name(
        self, component: Component, purl: Purl | None, version: str
    ) -> Identification | str:
        name = purl.name if purl is not None else component.name
        hints = _vendor_hints(purl, name)
        ambiguous = 0
        for product in _product_names(name):
            escaped = _escaped(product)
            vendors = [vendor for _, vendor in self._vendors_of(escaped)]
            found = _by_vendors(product, vendors, hints, version)
            if found is not None:
                return found
            ambiguous = max(ambiguous, len(vendors))
        if ambiguous:
            return f"product name {name!r} is used by {ambiguous} vendors: too ambiguous"
        return f"no CPE dictionary product or CVE criteria for {name!r}"


def readable_purl(text: str | None) -> Purl | None:
    """`text` as a purl; None for none, or for one that does not parse (a component is
    then known by its other names)."""
    if not text:
        return None
    try:
        return parse_purl(text)
    except InputError:
        return None


def _by_vendors(
    product: str, vendors: Sequence[str], hints: Sequence[str], version: str
) -> Identification | None:
    """A product name's identification by the vendors using it: the vendor the package
    hints at, the only vendor, or a few of them; None for none or too many."""
    escaped = _escaped(product)
    if not vendors:
        return None
    for hint in hints:
        if hint in vendors:
            return Identification(
                (cpe_for("a", hint, escaped, version).formatted(),),
                "name",
                CONFIDENCE["name-hint"],
                f"product name {product!r} used by vendor {hint!r}, "
                "which the package's name or namespace names",
            )
    if len(vendors) == 1:
        return Identification(
            (cpe_for("a", vendors[0], escaped, version).formatted(),),
            "name",
            CONFIDENCE["name-single"],
            f"product name {product!r}, used by one vendor only ({vendors[0]!r})",
        )
    if len(vendors) <= MAX_AMBIGUOUS_VENDORS:
        return Identification(
            tuple(cpe_for("a", v, escaped, version).formatted() for v in vendors),
            "name",
            CONFIDENCE["name-ambiguous"],
            f"product name {product!r}, used by {len(vendors)} vendors: " + ", ".join(vendors),
        )
    return None
