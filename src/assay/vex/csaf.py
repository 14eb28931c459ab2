"""CSAF 2.0 (and 2.1) documents of the `csaf_vex` profile (pure).

The product tree gives each product id its names: the `product_identification_helper`'s
purl(s) and CPE name, from `branches` (walked to any depth up to a limit),
`full_product_names` and `relationships` (a relationship's product is its
`product_reference`, the component, installed in or with another product: a finding on
that component is what it speaks of). `product_groups` let flags, threats and
remediations name several products at once.

Each product listed in a vulnerability's `product_status` is a statement, its status in
OpenVEX's words (`CSAF_STATUS`); its justification is the `flags[].label` naming it (the
five labels are OpenVEX's justifications), its impact statement the `threats[]` of
category `impact` naming it, its action statement the `remediations[]` naming it. A
`known_not_affected` product with neither a flag nor an impact threat is refused (the
profile requires one, as OpenVEX does). The vulnerability is its `cve`, else its first
`ids[].text`; the other ids are aliases. Statements carry the document's
`tracking.current_release_date`: a newer revision of an advisory wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from assay.vex._fields import MAX_PRODUCTS, Fields, Origin
from assay.vex.model import CSAF_STATUS, ProductId, VexStatement, VexStatus

VEX_CATEGORY: Final = "csaf_vex"
VERSIONS: Final = ("2.0", "2.1")
MAX_BRANCH_DEPTH: Final = 30
"""CSAF branches nested deeper than this are refused (the schema allows 30)."""
_EXTRA_STATUS: Final = {
    "first_affected": VexStatus.AFFECTED,
    "last_affected": VexStatus.AFFECTED,
}


def is_csaf(document: Mapping[str, Any]) -> bool:
    head = document.get("document")
    return isinstance(head, Mapping) and "csaf_version" in head


class _Tree:
    """Product ids and group ids of a product tree, with the names of each product."""

    def __init__(self, fields: Fields) -> None:
        self.fields = fields
        self.names: dict[str, list[ProductId]] = {}
        self.groups: dict[str, tuple[str, ...]] = {}

    def product(self, value: object, path: str) -> None:
        data = self.fields.mapping(value, path)
        pid = self.fields.required(data, "product_id", path)
        names = [ProductId("ref", pid)]
        helper_value = data.get("product_identification_helper")
        if helper_value is not None:
            names.extend(self._helper_names(helper_value, f"{path}.product_identification_helper"))
        self.names.setdefault(pid, []).extend(names)

    def _helper_names(self, value: object, where: str) -> list[ProductId]:
        """The purl(s) and CPE name of a `product_identification_helper`."""
        helper = self.fields.mapping(value, where)
        names = self.fields.names(helper, where, {"purl": "purl"})
        names.extend(ProductId("purl", p) for p in self.fields.strings(helper, "purls", where))
        return names + self.fields.names(helper, where, {"cpe": "cpe"})

    def branches(self, value: object, path: str) -> None:
        stack: list[tuple[object, str, int]] = [(value, path, 1)]
        while stack:
            items, where, depth = stack.pop()
            if depth > MAX_BRANCH_DEPTH:
                raise self.fields.fail(
                    where, f"expected branches nested at most {MAX_BRANCH_DEPTH}"
                )
            for index, branch in enumerate(self.fields.array(items, where, MAX_PRODUCTS)):
                at = f"{where}[{index}]"
                data = self.fields.mapping(branch, at)
                if data.get("product") is not None:
                    self.product(data["product"], f"{at}.product")
                if data.get("branches") is not None:
                    stack.append((data["branches"], f"{at}.branches", depth + 1))

    def read(self, value: object) -> None:
        if value is None:
            return
        tree = self.fields.mapping(value, "$.product_tree")
        if tree.get("branches") is not None:
            self.branches(tree["branches"], "$.product_tree.branches")
        names = tree.get("full_product_names")
        for index, item in enumerate(
            self.fields.array(names, "$.product_tree.full_product_names", MAX_PRODUCTS)
        ):
            self.product(item, f"$.product_tree.full_product_names[{index}]")
        for data, path in _entries(self.fields, tree, "relationships", "$.product_tree"):
            self.relationship(data, path)
        self.read_groups(tree)

    def read_groups(self, tree: Mapping[str, Any]) -> None:
        """The product ids of each `product_groups` entry, by its group id."""
        for data, path in _entries(self.fields, tree, "product_groups", "$.product_tree"):
            gid = self.fields.required(data, "group_id", path)
            self.groups[gid] = self.fields.strings(data, "product_ids", path)

    def relationship(self, data: Mapping[str, Any], path: str) -> None:
        """A relationship's product, named also by its component's purl and CPE names."""
        full = data.get("full_product_name")
        self.product(full, f"{path}.full_product_name")
        pid = self.fields.required(self.fields.mapping(full, path), "product_id", path)
        component = self.fields.required(data, "product_reference", path)
        self.names[pid].extend(
            n for n in self.names.get(component, []) if n.kind != "ref" or n.value == component
        )

    def ids_of(self, data: Mapping[str, Any], path: str) -> set[str]:
        """The product ids an entry names, directly or through its groups."""
        ids = set(self.fields.strings(data, "product_ids", path))
        for group in self.fields.strings(data, "group_ids", path):
            if group not in self.groups:
                raise self.fields.fail(f"{path}.group_ids", f"unknown product group {group!r}")
            ids.update(self.groups[group])
        return ids


def read_csaf(
    document: Mapping[str, Any], source: str, first: int = 0
) -> tuple[dict[str, Any], tuple[VexStatement, ...]]:
    """The document's facts (`id`, `author`, `timestamp`, `specVersion`) and statements."""
    fields = Fields(source)
    head = fields.mapping(document.get("document"), "$.document")
    version = fields.required(head, "csaf_version", "$.document")
    fields.one_of(version, VERSIONS, "$.document.csaf_version")
    category = fields.required(head, "category", "$.document")
    if category != VEX_CATEGORY:
        raise fields.fail(
            "$.document.category",
            f"expected {VEX_CATEGORY!r} (the VEX profile), found {category!r}",
        )
    tracking = fields.mapping(head.get("tracking"), "$.document.tracking")
    publisher = head.get("publisher")
    origin = Origin(  # (keywords in the order they are read: the first problem is told)
        doc_id=fields.required(tracking, "id", "$.document.tracking"),
        time=fields.time(tracking, "current_release_date", "$.document.tracking"),
        author=fields.string(publisher, "name", "$.document.publisher")
        if isinstance(publisher, Mapping)
        else None,
    )
    tree = _Tree(fields)
    tree.read(document.get("product_tree"))
    statements: list[VexStatement] = []
    for index, item in enumerate(
        fields.array(document.get("vulnerabilities"), "$.vulnerabilities")
    ):
        path = f"$.vulnerabilities[{index}]"
        statements.extend(_vulnerability(fields, tree, fields.mapping(item, path), path, origin))
    from dataclasses import replace

    numbered = tuple(replace(s, order=first + i) for i, s in enumerate(statements))
    return origin.facts(version), numbered


def _ids(fields: Fields, data: Mapping[str, Any], path: str) -> list[str]:
    """The vulnerability's `cve`, then its other `ids[].text` (the first names it)."""
    cve = fields.string(data, "cve", path)
    ids = [cve] if cve is not None else []
    for position, entry in enumerate(fields.array(data.get("ids"), f"{path}.ids", MAX_PRODUCTS)):
        at = f"{path}.ids[{position}]"
        text = fields.string(fields.mapping(entry, at), "text", at)
        if text is not None and text not in ids:
            ids.append(text)
    if not ids:
        raise fields.fail(path, "expected a cve or ids naming the vulnerability, found neither")
    return ids


def _entries(
    fields: Fields, data: Mapping[str, Any], key: str, path: str
) -> list[tuple[Mapping[str, Any], str]]:
    """The objects of the array `key`, each with its path."""
    found = []
    for position, value in enumerate(fields.array(data.get(key), f"{path}.{key}", MAX_PRODUCTS)):
        at = f"{path}.{key}[{position}]"
        found.append((fields.mapping(value, at), at))
    return found


def _first_said(
    fields: Fields, tree: _Tree, entries: list[tuple[Mapping[str, Any], str]], key: str
) -> dict[str, str]:
    """The text (`key`) of the first entry naming each product."""
    said: dict[str, str] = {}
    for entry, at in entries:
        text = fields.required(entry, key, at)
        for pid in tree.ids_of(entry, at):
            said.setdefault(pid, text)
    return said


def _actions(
    fields: Fields, tree: _Tree, remediations: list[tuple[Mapping[str, Any], str]]
) -> dict[str, str]:
    """Each product's remediations, `category: details` joined by `; ` in order."""
    action: dict[str, str] = {}
    for entry, at in remediations:
        details = fields.required(entry, "details", at)
        category = fields.string(entry, "category", at)
        text = f"{category}: {details}" if category else details
        for pid in tree.ids_of(entry, at):
            action[pid] = f"{action[pid]}; {text}" if pid in action else text
    return action


class _Words:
    """What a vulnerability says of each product: justification (`flags`), impact
    (`threats` of category `impact`), action (`remediations`)."""

    def __init__(self, fields: Fields, tree: _Tree, data: Mapping[str, Any], path: str) -> None:
        flags = _entries(fields, data, "flags", path)
        self.justification = _first_said(fields, tree, flags, "label")
        threats = _entries(fields, data, "threats", path)
        impacts = [(entry, at) for entry, at in threats if entry.get("category") == "impact"]
        self.impact = _first_said(fields, tree, impacts, "details")
        self.action = _actions(fields, tree, _entries(fields, data, "remediations", path))

    def explained(self, pid: str) -> bool:
        return pid in self.justification or pid in self.impact

    def of(self, pid: str, status: VexStatus) -> tuple[str | None, str | None, str | None]:
        """(justification, impact, action) of a statement of `status` on `pid`."""
        if status is VexStatus.NOT_AFFECTED:
            return self.justification.get(pid), self.impact.get(pid), None
        return None, None, self.action.get(pid)


def _product_names(
    fields: Fields, tree: _Tree, words: _Words, pid: str, status: VexStatus, *, at: str, name: str
) -> list[ProductId]:
    """The names the product tree gives `pid`; refused when it has none, or when a
    not_affected statement on it says neither why (flag) nor what (impact threat)."""
    names = tree.names.get(pid)
    if names is None:
        raise fields.fail(at, f"product {pid!r} is not in the product tree")
    if status is VexStatus.NOT_AFFECTED and not words.explained(pid):
        raise fields.fail(
            at,
            f"statement for {name} on {pid} is known_not_affected without a flag "
            "(justification) or an impact threat (impact statement)",
        )
    return names


def _vulnerability(
    fields: Fields, tree: _Tree, data: Mapping[str, Any], path: str, origin: Origin
) -> list[VexStatement]:
    ids = _ids(fields, data, path)
    name = ids[0]
    words = _Words(fields, tree, data, path)
    statuses_value = data.get("product_status")
    if statuses_value is None:
        return []
    statuses = fields.mapping(statuses_value, f"{path}.product_status")
    statements = []
    for group in statuses:
        status = CSAF_STATUS.get(group) or _EXTRA_STATUS.get(group)
        if status is None:
            continue  # `recommended` is advice, not a status
        where = f"{path}.product_status.{group}"
        for position, pid in enumerate(fields.strings(statuses, group, f"{path}.product_status")):
            at = f"{where}[{position}]"
            names = _product_names(fields, tree, words, pid, status, at=at, name=name)
            statements.append(
                VexStatement(
                    name,
                    tuple(ids[1:]),
                    tuple(dict.fromkeys(names)),
                    status,
                    *words.of(pid, status),
                    origin.time,
                    origin.doc_id,
                    origin.author,
                    f"{fields.source}: {at}",
                )
            )
    return statements
