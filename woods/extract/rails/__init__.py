"""Ruby files, read the Rails way: the Ruby walk plus Rails conventions, statically.

Why: a Rails app's meaning lives in conventions — where a file sits (`app/models/…`), what a class
inherits (`< ApplicationRecord`) and which class-body DSL it calls (`has_many`, `before_action`).
The Ruby gem learns these by booting the app; woods reads them from the tree. Every Ruby file is
extracted here: the plain walk (`woods.extract.ruby`) first, then the Rails layer, which only
changes files of a Rails app (located with the repository layout, `roots.py`) and rake files.

Guarantees:
* Rails types apply only to files of a Rails app (`roots.locate`).
* Rake tasks become `rake_task` units in every `.rake` file and `Rakefile` (a gem's tasks are tasks
  too): identifier = the namespaced task name (`billing:charge`).
* Only the file's main class (the one whose name matches the path, else the first class) takes the
  Rails type; nested classes stay `class`/`module`, methods stay `method`.
* File-profile units (`configuration`, `test_mapping`) and views use the path relative to the app
  root as identifier (`config/initializers/money.rb`), as the Ruby gem does.
* Routes: one `route` unit per generated route, identifier `VERB /path` (a repeated one gets `#2`,
  `#3` …), plus the route table in `FileExtraction.metadata["routes"]`.
"""

from __future__ import annotations

from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.extract.rails.classification import classify, is_concern, looks_like_middleware, primary_draft
from woods.extract.rails.files import configuration_unit, schema_units, test_mapping_unit
from woods.extract.rails.metadata import enrich_main
from woods.extract.rails.rake import rake_task_units
from woods.extract.rails.roots import is_rake_file, locate
from woods.extract.rails.routes import route_units
from woods.extract.ruby import RubyFile, assemble, walk_file
from woods.units import FileExtraction, Unit


def enrich(walked: RubyFile, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> tuple[list[Unit], dict[str, object]]:
    """Apply Rails conventions to a walked Ruby file: retype drafts, return extra units + file metadata."""
    extra: list[Unit] = []
    metadata: dict[str, object] = {}
    if is_rake_file(walked.file_path):
        extra.extend(rake_task_units(walked))
    location = locate(walked.file_path, layout.rails_roots)
    if location is None:
        return extra, metadata
    rel = location.rel
    metadata["rails_root"] = location.root
    if rel == "config/routes.rb" or rel.startswith("config/routes/"):
        units, table = route_units(walked)
        metadata["routes"] = table
        return extra + units, metadata
    if rel == "db/schema.rb":
        return extra + schema_units(walked), metadata
    if rel.startswith(("config/initializers/", "config/environments/")) or rel == "config/application.rb":
        extra.append(configuration_unit(walked, rel))
    if rel.startswith(("spec/", "test/")) and rel.endswith(".rb"):
        extra.append(test_mapping_unit(walked, rel))
        return extra, metadata
    for draft in walked.drafts:
        if draft.kind == "module" and is_concern(draft):
            enrich_main(draft, "concern", rel, walked.source)
    main = primary_draft(walked.drafts, rel)
    if main is not None and main.type == "concern":
        pass
    elif main is not None and not rel.startswith("config/"):
        rails_type = classify(main, rel, walked.source)
        if rails_type is not None:
            enrich_main(main, rails_type, rel, walked.source)
    elif main is not None and looks_like_middleware(main):
        enrich_main(main, "middleware", rel, walked.source)
    return extra, metadata


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one Ruby file (`.rb`, `.rake`, `Rakefile`, `Gemfile`, …), Rails-aware by path."""
    walked, warnings = walk_file(file_path, source)
    try:
        extra_units, file_metadata = enrich(walked, layout)
        return assemble(walked, warnings, extra_units, file_metadata)
    finally:
        walked.release()
