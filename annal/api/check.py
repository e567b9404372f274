"""The `annal` crate's public API, listed and checked from rustdoc's JSON output.

Usage: check.py DOC_FOLDER [--write]

DOC_FOLDER holds the rustdoc JSON of `annal` and of the inner crates it re-exports from
(`.ci/run` makes them). The script walks every public item reachable from the crate root, writes
one line per item, and fails when:

- a type in a public signature, field or trait impl is from a third-party crate (anything but
  std, core, alloc and annal's own crates): a user would have to depend on that crate's version;
- a type in a public signature is one of annal's own but not reachable by a public path of the
  `annal` crate: a user receives it but cannot name it;
- the crate root holds more than 60 names, or any free function;
- the listing differs from `annal/api/public-api.txt` (with --write, that file is rewritten).

Only the Python standard library is used, so it runs wherever CI runs.
"""

from __future__ import annotations

import difflib
import json
import os
import sys

OURS = {"annal", "annal_engine", "annal_query", "annal_formats", "annal_sources", "annal_fleet"}
STD = {"std", "core", "alloc"}
ROOT_NAMES_MAX = 60
LISTING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "public-api.txt")


class Crate:
    """One crate's rustdoc JSON: its items, and where each id it mentions lives."""

    def __init__(self, path: str):
        with open(path, encoding="utf-8") as f:
            self.doc = json.load(f)
        self.index = self.doc["index"]
        self.paths = self.doc["paths"]
        root_name = self.index[str(self.doc["root"])]["name"]
        self.names = {"0": root_name}
        for crate_id, crate in self.doc["external_crates"].items():
            self.names[crate_id] = crate["name"]
        self.by_path = {}
        for item_id, entry in self.paths.items():
            if entry["crate_id"] == 0:
                self.by_path[tuple(entry["path"])] = item_id

    def where(self, item_id) -> tuple[str, tuple[str, ...]] | None:
        """The crate and canonical path of the item `item_id` names, if rustdoc knows it."""
        entry = self.paths.get(str(item_id))
        if entry is None:
            return None
        return self.names.get(str(entry["crate_id"]), "?"), tuple(entry["path"])


class Walk:
    """The public API reachable from `annal`'s root: lines, nameable items, types used."""

    def __init__(self, crates: dict[str, Crate]):
        self.crates = crates
        self.lines: set[str] = set()
        self.nameable: dict[tuple[str, tuple[str, ...]], str] = {}
        self.used: list[tuple[tuple[str, tuple[str, ...]], str]] = []
        self.foreign: list[str] = []
        self.visited: set[tuple[str, str]] = set()

    def module(self, crate: Crate, module: dict, prefix: str) -> list[tuple[str, str]]:
        """Walks a module's public items; returns (kind, name) of each."""
        names = []
        for item_id in module["inner"]["module"]["items"]:
            item = crate.index[str(item_id)]
            if item["visibility"] != "public":
                continue
            if "use" in item["inner"]:
                use = item["inner"]["use"]
                if use["is_glob"]:
                    self.foreign.append(f"{prefix}: a glob re-export ({use['source']}) hides what is public")
                    continue
                target = self.resolve(crate, use["id"])
                if target is None:
                    self.foreign.append(f"{prefix}::{use['name']}: re-exports {use['source']}, not annal's")
                    continue
                owner, target_item = target
                names.append((kind_of(target_item), use["name"]))
                self.item(owner, target_item, f"{prefix}::{use['name']}")
            else:
                names.append((kind_of(item), item["name"]))
                self.item(crate, item, f"{prefix}::{item['name']}")
        return names

    def resolve(self, crate: Crate, item_id) -> tuple[Crate, dict] | None:
        """The item an id of `crate` names, in the JSON of the crate that defines it."""
        if str(item_id) in crate.index:
            return crate, crate.index[str(item_id)]
        place = crate.where(item_id)
        if place is None or place[0] not in self.crates:
            return None
        owner = self.crates[place[0]]
        owned_id = owner.by_path.get(place[1])
        if owned_id is None or owned_id not in owner.index:
            return None
        return owner, owner.index[owned_id]

    def item(self, crate: Crate, item: dict, public: str) -> None:
        kind = kind_of(item)
        key = (crate.names["0"], crate.paths.get(str(item["id"]), {}).get("path"))
        if key[1] is not None:
            self.nameable.setdefault((key[0], tuple(key[1])), public)
        if (crate.names["0"], str(item["id"])) in self.visited:
            self.lines.add(f"{kind} {public} (again)")
            return
        self.visited.add((crate.names["0"], str(item["id"])))
        inner = item["inner"]
        if kind == "module":
            self.lines.add(f"mod {public}")
            self.module(crate, item, public)
        elif kind == "struct":
            self.lines.add(f"struct {public}{generics(inner['struct']['generics'])}")
            fields = inner["struct"]["kind"]
            for field_id in fields.get("plain", {}).get("fields", []) + [
                f for f in (fields.get("tuple") or []) if f is not None
            ]:
                self.field(crate, crate.index[str(field_id)], public)
            self.impls(crate, inner["struct"]["impls"], public)
        elif kind == "enum":
            self.lines.add(f"enum {public}{generics(inner['enum']['generics'])}")
            for variant_id in inner["enum"]["variants"]:
                variant = crate.index[str(variant_id)]
                self.lines.add(f"variant {public}::{variant['name']}")
                shape = variant["inner"]["variant"]["kind"]
                if isinstance(shape, dict):
                    for field_id in shape.get("struct", {}).get("fields", []) + [
                        f for f in (shape.get("tuple") or []) if f is not None
                    ]:
                        self.field(crate, crate.index[str(field_id)], f"{public}::{variant['name']}")
            self.impls(crate, inner["enum"]["impls"], public)
        elif kind == "function":
            self.function(crate, item, public)
        elif kind == "constant":
            self.lines.add(f"const {public}: {self.ty(crate, inner['constant']['type'], public)}")
        elif kind == "type_alias":
            self.lines.add(f"type {public} = {self.ty(crate, inner['type_alias']['type'], public)}")
        elif kind == "trait":
            self.lines.add(f"trait {public}")
            for member_id in inner["trait"]["items"]:
                member = crate.index[str(member_id)]
                if kind_of(member) == "function":
                    self.function(crate, member, f"{public}::{member['name']}")
        else:
            self.lines.add(f"{kind} {public}")

    def field(self, crate: Crate, field: dict, owner: str) -> None:
        if field["visibility"] != "public":
            return
        shown = self.ty(crate, field["inner"]["struct_field"], owner)
        self.lines.add(f"field {owner}::{field['name']}: {shown}")

    def impls(self, crate: Crate, impl_ids: list, owner: str) -> None:
        for impl_id in impl_ids:
            impl = crate.index[str(impl_id)]["inner"]["impl"]
            if impl["is_synthetic"] or impl["blanket_impl"] is not None:
                continue
            trait = impl["trait"]
            if trait is not None:
                shown = self.path_ty(crate, trait, owner)
                self.lines.add(f"impl {shown} for {owner}")
                continue
            for member_id in impl["items"]:
                member = crate.index[str(member_id)]
                if member["visibility"] == "public" and kind_of(member) == "function":
                    self.function(crate, member, f"{owner}::{member['name']}")
                elif member["visibility"] == "public" and kind_of(member) == "assoc_const":
                    const = member["inner"]["assoc_const"]
                    self.lines.add(f"const {owner}::{member['name']}: {self.ty(crate, const['type'], owner)}")

    def function(self, crate: Crate, item: dict, public: str) -> None:
        sig = item["inner"]["function"]["sig"]
        inputs = ", ".join(
            name if name == "self" else f"{name}: {self.ty(crate, ty, public)}" for name, ty in sig["inputs"]
        )
        output = f" -> {self.ty(crate, sig['output'], public)}" if sig["output"] else ""
        self.lines.add(f"fn {public}{generics(item['inner']['function']['generics'])}({inputs}){output}")

    def path_ty(self, crate: Crate, path: dict, used_in: str) -> str:
        place = crate.where(path["id"])
        args = self.args(crate, path.get("args"), used_in)
        if place is None:
            return f"{path['path']}{args}"
        owner, canonical = place
        if owner in OURS:
            self.used.append(((owner, canonical), used_in))
        elif owner not in STD:
            self.foreign.append(f"{used_in}: uses {owner}::{'::'.join(canonical[1:])}, a third-party type")
        return f"{canonical[-1]}{args}"

    def args(self, crate: Crate, args, used_in: str) -> str:
        if not args:
            return ""
        if "angle_bracketed" in args:
            shown = []
            for arg in args["angle_bracketed"]["args"]:
                if "type" in arg:
                    shown.append(self.ty(crate, arg["type"], used_in))
                elif "lifetime" in arg:
                    shown.append(arg["lifetime"])
                else:
                    shown.append("_")
            for constraint in args["angle_bracketed"].get("constraints", []):
                binding = constraint.get("binding", {})
                if "equality" in binding and "type" in binding["equality"]:
                    shown.append(f"{constraint['name']} = {self.ty(crate, binding['equality']['type'], used_in)}")
            return f"<{', '.join(shown)}>" if shown else ""
        if "parenthesized" in args:
            inputs = ", ".join(self.ty(crate, t, used_in) for t in args["parenthesized"]["inputs"])
            output = args["parenthesized"].get("output")
            return f"({inputs})" + (f" -> {self.ty(crate, output, used_in)}" if output else "")
        return ""

    def bounds(self, crate: Crate, bounds: list, used_in: str) -> str:
        shown = []
        for bound in bounds:
            if "trait_bound" in bound:
                shown.append(self.path_ty(crate, bound["trait_bound"]["trait"], used_in))
            elif "outlives" in bound:
                shown.append(bound["outlives"])
        return " + ".join(shown)

    def ty(self, crate: Crate, ty, used_in: str) -> str:
        if ty is None:
            return "()"
        (tag, value), = ty.items()
        if tag == "resolved_path":
            return self.path_ty(crate, value, used_in)
        if tag == "borrowed_ref":
            mutable = "mut " if value["is_mutable"] else ""
            lifetime = f"{value['lifetime']} " if value.get("lifetime") else ""
            return f"&{lifetime}{mutable}{self.ty(crate, value['type'], used_in)}"
        if tag == "slice":
            return f"[{self.ty(crate, value, used_in)}]"
        if tag == "array":
            return f"[{self.ty(crate, value['type'], used_in)}; {value['len']}]"
        if tag == "tuple":
            return f"({', '.join(self.ty(crate, t, used_in) for t in value)})"
        if tag == "impl_trait":
            return f"impl {self.bounds(crate, value, used_in)}"
        if tag == "dyn_trait":
            traits = [self.path_ty(crate, t["trait"], used_in) for t in value["traits"]]
            return f"dyn {' + '.join(traits)}"
        if tag == "raw_pointer":
            return f"*{'mut' if value['is_mutable'] else 'const'} {self.ty(crate, value['type'], used_in)}"
        if tag == "qualified_path":
            return f"<{self.ty(crate, value['self_type'], used_in)}>::{value['name']}"
        if tag == "function_pointer":
            sig = value["sig"]
            inputs = ", ".join(self.ty(crate, t, used_in) for _, t in sig["inputs"])
            return f"fn({inputs})" + (f" -> {self.ty(crate, sig['output'], used_in)}" if sig["output"] else "")
        if tag in ("generic", "primitive"):
            return value
        return tag


def kind_of(item: dict) -> str:
    (kind,) = item["inner"].keys()
    return kind


def generics(params: dict) -> str:
    names = [p["name"] for p in params["params"] if not p["name"].startswith("impl ")]
    return f"<{', '.join(names)}>" if names else ""


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    folder = argv[1]
    crates = {}
    for name in sorted(OURS):
        path = os.path.join(folder, f"{name}.json")
        if not os.path.exists(path):
            print(f"public API: {path} is missing: run rustdoc with --output-format json first", file=sys.stderr)
            return 1
        crates[name] = Crate(path)
    walk = Walk(crates)
    root = crates["annal"].index[str(crates["annal"].doc["root"])]
    top = walk.module(crates["annal"], root, "annal")
    problems = list(walk.foreign)
    if len(top) > ROOT_NAMES_MAX:
        problems.append(f"the crate root holds {len(top)} names, more than {ROOT_NAMES_MAX}")
    problems += [f"annal::{name} is a free function at the crate root" for kind, name in top if kind == "function"]
    for (owner, canonical), used_in in walk.used:
        if (owner, canonical) not in walk.nameable:
            problems.append(f"{used_in}: uses {'::'.join(canonical)}, which no public path of annal names")
    listing = sorted(walk.lines)
    text = "".join(f"{line}\n" for line in listing)
    if "--write" in argv:
        with open(LISTING, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        with open(LISTING, encoding="utf-8") as f:
            committed = f.read()
        if committed != text:
            diff = difflib.unified_diff(
                committed.splitlines(), listing, "annal/api/public-api.txt", "the API now", lineterm=""
            )
            problems.append("the public API differs from annal/api/public-api.txt (check.py --write updates it):")
            problems += list(diff)
    for problem in sorted(set(problems), key=problems.index):
        print(f"public API: {problem}", file=sys.stderr)
    print(f"public API: {len(top)} names at the root, {len(listing)} items, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
