"""The layer rules and the seams, checked on the import statements and attribute reads of every module.

Layers:
- core/ is pure: no I/O layers, templating, databases, chat libraries, clock or environment;
- catalog/ reads no environment and knows no chat (settings arrive as arguments);
- storage/ keeps rows: it imports neither catalog, core nor bot (the catalog hands it JSON text);
- only bot/adapters/ imports the chat libraries and the MCP server's (the SDK, its types, its HTTP stack);
- adapters and renderers talk to the service and the reply model only, never to core, catalog or
  storage (the inbox, the shared queue and elections reach them as ``bot.handover`` Protocols);
- core and catalog know no chat: no command list, no @BotName suffix, no Discord mention syntax;
- the query package (``core/query/``) imports of the rest of core only the shared types (``core.models``);
- the fakes import no product code: they stand for the outside world, whose expectations live in the
  tests and benches.

Seams (the whole tree: product, fakes, benches and tests):
- a rule holds for where a name is defined, not where it was imported from: imports are followed
  through re-exports, and no module passes on another package's names (a re-export shim);
- an adapter reads only the service's own API: an attribute of ``Service`` whose type lives in core or
  catalog (``service.store``, ``service.catalog``) is a reach-through into what the service owns;
- no module imports a private name (``_x``) from another module or reads one off an imported module;
- no import circles, counting the imports made only for type checking or inside functions;
- no module over 600 lines and no class over 250 outside tests/ (the fakes and benches included).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "catalog", "storage", "bot", "locales", "fitbot_fakes", "bench", "tests")
FORBIDDEN_IN_CORE = {
    "bot", "catalog", "locales", "jinja2", "aiosqlite", "sqlite3", "discord", "telegram", "huggingface_hub",
    "matplotlib", "httpx", "aiohttp", "requests", "os", "socket", "subprocess", "time", "datetime", "gguf",
    "mcp", "mcp_types", "starlette", "uvicorn",
}  # fmt: skip
# the chat platforms, and the MCP SDK with the HTTP stack it serves on (bot/adapters/mcp_*.py)
PLATFORM_LIBS = {"discord", "telegram", "mcp", "mcp_types", "starlette", "uvicorn"}
CHAT_WORDS = re.compile(r"mygpu|@BotName|@\\w\{1,64\}|bot_username|<@|allowed_mentions|/settings|/forget", re.I)
MAX_MODULE_LINES, MAX_CLASS_LINES = 600, 250
# Over the size rule in the faults work (issue 21) as merged; the test fails when one is fixed, so that
# this list only shrinks.
KNOWN_OVERSIZED: set[str] = set()


@dataclass
class Module:
    name: str
    path: Path
    tree: ast.Module
    defined: set[str] = field(default_factory=set)  # names bound at top level by a def, class or assignment
    names: dict[str, tuple[str, str]] = field(default_factory=dict)  # local name -> (module, name) it imports
    aliases: dict[str, str] = field(
        default_factory=dict
    )  # local name -> module (``import a.b as m``, ``from a import b``)
    imports: list[tuple[str, str | None, int]] = field(
        default_factory=list
    )  # (module, name or None, line), all of them


@cache
def project() -> dict[str, Module]:
    """Every module of the tree, with what it defines and imports (nested and TYPE_CHECKING imports too)."""
    mods: dict[str, Module] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            mods[name] = Module(name, path, ast.parse(path.read_text(encoding="utf-8")))
    for mod in mods.values():
        for node in mod.tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                mod.defined.add(node.name)
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                mod.defined.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    mod.imports.append((alias.name, None, node.lineno))
                    if alias.asname:
                        mod.aliases[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    mod.imports.append((node.module, alias.name, node.lineno))
                    local = alias.asname or alias.name
                    if f"{node.module}.{alias.name}" in mods:
                        mod.aliases[local] = f"{node.module}.{alias.name}"
                    else:
                        mod.names[local] = (node.module, alias.name)
    return mods


def origin(module: str, name: str | None) -> str:
    """The module that defines what ``from module import name`` (or ``import module``) brings in."""
    mods = project()
    seen = set()
    while name is not None and module in mods and (module, name) not in seen:
        seen.add((module, name))
        if f"{module}.{name}" in mods:
            return f"{module}.{name}"
        here = mods[module]
        if name in here.defined or name not in here.names:
            return module
        module, name = here.names[name]
    return module


def origins(path: Path) -> set[str]:
    """Where everything a file imports is defined, as dotted module names, re-exports followed."""
    mod = next(m for m in project().values() if m.path == path)
    return {origin(module, name) for module, name, _ in mod.imports}


def roots(path: Path) -> set[str]:
    return {name.split(".")[0] for name in origins(path)}


def modules(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


# --- layers ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", modules("core"), ids=lambda p: p.name)
def test_core_is_pure(path):
    assert not roots(path) & FORBIDDEN_IN_CORE


@pytest.mark.parametrize("path", modules("catalog"), ids=lambda p: p.name)
def test_catalog_reads_no_environment_and_knows_no_bot(path):
    text = path.read_text(encoding="utf-8")
    assert "os.environ" not in text and "getenv" not in text
    assert not roots(path) & ({"bot"} | PLATFORM_LIBS)


@pytest.mark.parametrize("path", modules("storage"), ids=lambda p: p.name)
def test_storage_imports_neither_catalog_nor_bot(path):
    assert not roots(path) & ({"catalog", "bot", "core", "locales"} | PLATFORM_LIBS)


@pytest.mark.parametrize(
    "path", [p for p in modules("bot") + modules("catalog") if "adapters" not in p.parts], ids=lambda p: p.name
)
def test_only_adapters_import_chat_platforms(path):
    assert not roots(path) & PLATFORM_LIBS


@pytest.mark.parametrize("path", modules("bot/adapters") + modules("bot/render"), ids=lambda p: p.name)
def test_adapters_and_renderers_use_the_service_only(path):
    reached = {m for m in origins(path) if m.split(".")[0] in ("core", "catalog", "storage")}
    assert not reached, "use bot.service / bot.reply instead"


@pytest.mark.parametrize("path", modules("core/query"), ids=lambda p: p.name)
def test_the_query_package_imports_only_the_shared_core_types(path):
    outside = {m for m in origins(path) if m.split(".")[0] == "core" and not m.startswith("core.query")}
    assert outside <= {"core.models"}


# Sentences are written in the cards, the renderers and the service only (issue 33): no other module imports locales.
SENTENCE_WRITERS = ("bot/cards/", "bot/render/", "bot/service.py")


@pytest.mark.parametrize("path", modules("bot") + modules("catalog") + modules("core") + modules("storage"), ids=str)
def test_only_cards_render_and_the_service_import_locales(path):
    name = path.relative_to(ROOT).as_posix()
    imports = "locales" in roots(path)
    if name.startswith(SENTENCE_WRITERS):
        return
    assert not imports, f"{name} writes words: build them in bot/cards/ (core.models.Lang is the language type)"


@pytest.mark.parametrize("path", modules("fitbot_fakes"), ids=lambda p: p.name)
def test_fakes_import_no_product_code(path):
    assert not roots(path) & {"core", "catalog", "storage", "bot", "locales"}


@pytest.mark.parametrize("path", modules("core") + modules("catalog"), ids=lambda p: p.name)
def test_core_and_catalog_know_no_chat(path):
    assert not CHAT_WORDS.search(path.read_text(encoding="utf-8"))


# --- seams -------------------------------------------------------------------------------------


def test_re_exports_are_followed():
    """The layer tests see through a module that passes on another's names (the old ``bot/inbox.py``)."""
    mods = project()
    shim = Module("bot.shim", ROOT / "bot" / "shim.py", ast.parse("from storage.inbox import InboxStore\n"))
    shim.names["InboxStore"] = ("storage.inbox", "InboxStore")
    mods["bot.shim"] = shim
    try:
        assert origin("bot.shim", "InboxStore") == "storage.inbox"
    finally:
        del mods["bot.shim"]


def test_no_module_passes_on_another_packages_names():
    """``from bot.x import name`` must find ``name`` made in the ``bot`` package, not imported there
    from core, catalog or a library: such a shim hides the real dependency from the layer rules."""
    mods = project()
    shims = []
    for mod in mods.values():
        for module, name, line in mod.imports:
            if module in mods and name is not None and f"{module}.{name}" not in mods:
                source = origin(module, name)
                if source.split(".")[0] != module.split(".")[0]:
                    shims.append(f"{mod.path.relative_to(ROOT)}:{line}: {name} from {module} is {source}'s")
    assert not shims, "\n".join(shims)


def test_adapters_do_not_reach_through_the_service():
    """``service.answer(...)`` is the service's API; ``service.store.inbox`` reaches into what it owns."""
    service = project()["bot.service"]
    owned = _core_or_catalog_attributes(service)
    reaches = []
    for path in modules("bot/adapters") + modules("bot/render"):
        mod = next(m for m in project().values() if m.path == path)
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.Attribute) and _names_service(node.value) and node.attr in owned:
                reaches.append(f"{path.relative_to(ROOT)}:{node.lineno}: service.{node.attr} ({owned[node.attr]})")
            if isinstance(node, ast.Attribute) and _names_service(node.value) and node.attr.startswith("_"):
                reaches.append(f"{path.relative_to(ROOT)}:{node.lineno}: service.{node.attr} (private)")
    assert not reaches, "\n".join(reaches)


def test_the_reach_through_check_knows_what_the_service_owns():
    owned = _core_or_catalog_attributes(project()["bot.service"])
    assert {"store", "hub", "search", "catalog"} <= owned.keys()
    assert not {"answer", "limits", "inbox", "deferred"} & owned.keys()


def test_no_private_names_cross_modules():
    mods = project()
    found = []
    for mod in mods.values():
        for module, name, line in mod.imports:
            if module in mods and name and _private(name) and f"{module}.{name}" not in mods:
                found.append(f"{mod.path.relative_to(ROOT)}:{line}: {name} from {module}")
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _private(node.attr):
                target = mod.aliases.get(node.value.id)
                if target in mods:
                    found.append(f"{mod.path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr} of {target}")
    assert not found, "\n".join(found)


def test_no_import_circles():
    circles = [sorted(c) for c in _circles()]
    assert not circles, f"import circles: {circles}"


def test_the_circle_check_finds_one():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _strongly_connected(graph) == {frozenset({"a", "b", "c"})}


@pytest.mark.parametrize("package", [p for p in PACKAGES if p != "tests"])
def test_modules_and_classes_keep_the_size_rule(package):
    too_big = []
    for mod in project().values():
        if mod.name.split(".")[0] != package:
            continue
        lines = len(mod.path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            too_big.append(f"{mod.path.relative_to(ROOT)}: {lines} lines")
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.ClassDef) and (size := node.end_lineno - node.lineno + 1) > MAX_CLASS_LINES:
                too_big.append(f"{mod.path.relative_to(ROOT)}: class {node.name}, {size} lines")
    known = {k for k in KNOWN_OVERSIZED if k.split("/")[0] == package}
    new = [t for t in too_big if t.rsplit(",", 1)[0] not in known]
    gone = known - {t.rsplit(",", 1)[0] for t in too_big}
    assert not new, "\n".join(new)
    assert not gone, f"within the rule now, so take them off KNOWN_OVERSIZED: {sorted(gone)}"


# --- helpers -----------------------------------------------------------------------------------


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _names_service(node: ast.expr) -> bool:
    """``service`` or ``x.service``: the Service an adapter holds."""
    return (isinstance(node, ast.Name) and node.id == "service") or (
        isinstance(node, ast.Attribute) and node.attr == "service"
    )


def _core_or_catalog_attributes(service: Module) -> dict[str, str]:
    """Attributes of ``Service`` whose declared type is defined in core or catalog, with that module:
    ``__init__`` parameters stored under their own name, properties by their return type, attributes
    assigned a constructed object by the class constructed."""
    cls = next(n for n in service.tree.body if isinstance(n, ast.ClassDef) and n.name == "Service")
    types: dict[str, ast.expr] = {}
    for item in cls.body:
        if isinstance(item, ast.FunctionDef) and item.name == "__init__":
            params = {a.arg: a.annotation for a in item.args.args + item.args.kwonlyargs if a.annotation}
            for node in ast.walk(item):
                if isinstance(node, ast.Assign):
                    for attr, value in _assigned(node):
                        if isinstance(value, ast.Name) and value.id in params:
                            types[attr] = params[value.id]
                        elif isinstance(value, ast.Call):
                            types[attr] = value.func
        elif isinstance(item, ast.FunctionDef) and item.returns is not None and _is_property(item):
            types[item.name] = item.returns
    owned = {}
    for attr, annotation in types.items():
        for name in _type_names(annotation):
            source = origin(service.name, name) if name in service.names else service.name
            if source.split(".")[0] in ("core", "catalog", "storage"):
                owned[attr] = source
    return owned


def _is_property(fn: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list)


def _assigned(node: ast.Assign) -> list[tuple[str, ast.expr]]:
    """``self.a = x`` and ``self.a, self.b = x, y`` as (attribute, value) pairs."""
    out = []
    for target in node.targets:
        targets = target.elts if isinstance(target, ast.Tuple) else [target]
        values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value] * len(targets)
        for t, v in zip(targets, values, strict=False):
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                out.append((t.attr, v))
    return out


def _type_names(annotation: ast.expr) -> set[str]:
    """The names in a type annotation (which may be a string under ``from __future__ import annotations``)."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        annotation = ast.parse(annotation.value, mode="eval").body
    return {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}


def _circles() -> set[frozenset[str]]:
    mods = project()
    graph: dict[str, set[str]] = {name: set() for name in mods}
    for mod in mods.values():
        for module, name, _ in mod.imports:
            target = f"{module}.{name}" if name and f"{module}.{name}" in mods else module
            while target and target not in mods:
                target = target.rpartition(".")[0]
            if target and target != mod.name:
                graph[mod.name].add(target)
    return _strongly_connected(graph)


def _strongly_connected(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """Tarjan's algorithm, iterative; only components of two or more modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.add(frozenset(component))
    return found
