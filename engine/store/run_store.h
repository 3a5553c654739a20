// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Runs, their metrics, evaluations and checkpoints, in the same SQLite file as
// the bars. A run killed mid-training keeps every metric of its last committed
// batch and is marked interrupted on the next start.

#include "engine/store/bar_store.h"
#include "engine/store/run_status.h"
#include "engine/telemetry/metric_sample.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace foxhunt {

/// One stored run.
struct RunInfo {
    std::int64_t id = 0;
    std::string name;
    std::int64_t createdNs = 0;
    std::int64_t finishedNs = 0; ///< 0 while running
    RunStatus status = RunStatus::Running;
    std::string configJson = "{}";
    std::int64_t seriesId = 0;
    std::string series; ///< symbol of the series, kept if the series is deleted
    std::int64_t fromTs = 0, toTs = 0;
    std::string versionsJson = "{}";
    std::string error;             ///< readable reason when failed
    std::string uuid;              ///< unique across databases; written into the run's checkpoint files
    std::string notes;             ///< the user's free text about the run
    std::vector<std::string> tags; ///< the user's labels, sorted case-insensitively
    std::int64_t trashedNs = 0;    ///< when the run was moved to the trash, 0 when it is not there
    std::string trashPath;         ///< where the desktop trash holds its checkpoint folder ("" for none)
    std::int64_t groupId = 0;      ///< the run group it belongs to, 0 = none
    std::int64_t groupMember =
        0; ///< its member of that group (a seeds group: its seed; a folds group: its index into the fold plan)
};

/// What the members of a run group vary: the seed; the walk-forward fold (and seed); sweep points later.
enum class GroupKind { Seeds, Folds, Sweep };
/// "seeds", "folds", "sweep".
std::string toString(GroupKind kind);
/// Parses the names above; throws std::invalid_argument otherwise.
GroupKind groupKindFromString(const std::string& name);

/// What a new run is born with besides its config, written in the same transaction as the run
/// itself, so that a process killed right after createRun() leaves no run without them.
struct NewRunLabels {
    std::vector<std::string> tags; ///< checked as addTags() checks them
    std::int64_t groupId = 0;      ///< > 0: the run is member `groupMember` of this group (addGroupMember's rules)
    std::int64_t groupMember = -1;
};

/// One stored run group: one config, trained once per member, each member an ordinary run.
struct RunGroupInfo {
    std::int64_t id = 0;
    std::string uuid;
    GroupKind kind = GroupKind::Seeds;
    std::string configJson = "{}"; ///< the config every member shares (its own seed aside)
    std::vector<std::int64_t>
        members; ///< the member spec, in order: the seeds of a seeds group, 0..N-1 of a folds group
    std::int64_t createdNs = 0;
    std::int64_t finishedNs = 0; ///< 0 while running
    /// As stored, except that a group left running by a process that has gone reads interrupted.
    RunStatus status = RunStatus::Running;
};

/// Which runs RunStore::runs() lists.
enum class RunListing { Active, Trashed, All };

/// One stored evaluation (a JSON document per model and split).
struct EvaluationRecord {
    std::string model;
    std::string split; ///< "validation", "test"
    std::string resultJson;
};

/// One checkpoint file of a model.
struct CheckpointRecord {
    std::string model;
    std::int64_t step = 0;
    std::string path; ///< where the file is (resolved against RunStore::checkpointFolder())
    std::int64_t createdNs = 0;
};

/// What RunStore::deleteRun() did with the run's checkpoint files.
struct RunDeletion {
    std::vector<std::string> removed; ///< checkpoint files removed
    std::vector<std::string> kept;    ///< "path: why" for each checkpoint file left in place
};

/// Reads and writes runs through a Database's connection (same thread as it).
class RunStore {
public:
    /// Works on `database`, which must outlive this store.
    explicit RunStore(Database& database) : m_database(database) { }
    /// Works on the database `store` sits on.
    explicit RunStore(BarStore& store) : RunStore(store.database()) { }

    /// Creates a run in status running, owned by this process, with its tags and group place in one
    /// transaction. Throws std::invalid_argument (and creates nothing) for a bad tag or group place.
    std::int64_t createRun(const std::string& name, const std::string& configJson, const SeriesInfo& series,
                           std::int64_t fromTs, std::int64_t toTs, const std::string& versionsJson,
                           const NewRunLabels& labels = {});
    /// Appends samples in one transaction (the batch is committed whole or not at all).
    void appendMetrics(std::int64_t runId, const MetricBatch& samples);
    /// Takes over a stopped, failed or interrupted run to resume it: status running, owned by this process.
    void reopenRun(std::int64_t runId);
    /// Replaces what the run records of the machine it ran on (versions JSON).
    void setVersions(std::int64_t runId, const std::string& versionsJson);
    /// Sets the final (or interrupted) status; error is kept for failed runs.
    void setStatus(std::int64_t runId, RunStatus status, const std::string& error = {});
    /// Stores (replacing) one evaluation.
    void saveEvaluation(std::int64_t runId, const std::string& model, const std::string& split,
                        const std::string& resultJson);
    /// Records a checkpoint file written for a model. A path inside checkpointFolder() is stored
    /// relative to it, so a database moved or copied together with that folder still finds its files.
    void addCheckpoint(std::int64_t runId, const std::string& model, std::int64_t step, const std::string& path);
    /// Deletes, in one transaction, the samples of a run recorded after a step: `lastKept` pairs a
    /// model ("session" too) with the last step it keeps; models not named keep all of theirs. A
    /// resumed run drops what was recorded after its checkpoint, so no step is stored twice.
    void deleteMetricsAfter(std::int64_t runId, const std::vector<std::pair<std::string, std::int64_t>>& lastKept);

    /// Longest run name, in characters (Unicode code points).
    static constexpr std::size_t kMaxNameLength = 200;
    /// Longest tag, in characters.
    static constexpr std::size_t kMaxTagLength = 64;
    /// Longest notes, in characters.
    static constexpr std::size_t kMaxNotesLength = 20000;
    /// `name` without surrounding white space, or throws std::invalid_argument saying why it cannot
    /// name a run (longer than kMaxNameLength, a control character, not UTF-8). "" is allowed.
    static std::string checkedName(const std::string& name);
    /// `tag` without surrounding white space, or throws std::invalid_argument saying why it cannot be
    /// a tag (empty, a comma, a control character, longer than kMaxTagLength, not UTF-8).
    static std::string checkedTag(const std::string& tag);
    /// Renames a run (checkedName()); throws std::invalid_argument for a bad name or an unknown run.
    void setName(std::int64_t runId, const std::string& name);
    /// Replaces a run's notes (kMaxNotesLength, UTF-8); throws std::invalid_argument like setName.
    void setNotes(std::int64_t runId, const std::string& notes);
    /// Adds tags (checkedTag()) to a run in one transaction; one it has already, in any case, is kept
    /// as it was. Throws std::invalid_argument for a bad tag (adding none) or an unknown run.
    void addTags(std::int64_t runId, const std::vector<std::string>& tags);
    /// Removes tags from a run, matched case-insensitively; a tag it does not have is no error.
    void removeTags(std::int64_t runId, const std::vector<std::string>& tags);
    /// Makes `tags` the run's whole set, in one transaction (addTags' rules).
    void setTags(std::int64_t runId, const std::vector<std::string>& tags);
    /// A run's tags, sorted case-insensitively.
    std::vector<std::string> tags(std::int64_t runId) const;

    /// The runs outside the trash (or those in it, or all), newest first.
    std::vector<RunInfo> runs(RunListing which = RunListing::Active) const;
    std::optional<RunInfo> run(std::int64_t runId) const;
    /// Metrics of a run, optionally of one model and/or metric, ordered by model, metric, step.
    MetricBatch metrics(std::int64_t runId, const std::string& model = {}, const std::string& metric = {}) const;
    /// Number of metric samples stored for a run.
    std::uint64_t metricCount(std::int64_t runId) const;
    std::vector<EvaluationRecord> evaluations(std::int64_t runId) const;
    std::vector<CheckpointRecord> checkpoints(std::int64_t runId) const;
    /// The newest checkpoint of a model, if any.
    std::optional<CheckpointRecord> lastCheckpoint(std::int64_t runId, const std::string& model) const;
    /// Deletes a run with its metrics, evaluations and checkpoint records, and removes those of its
    /// checkpoint files that are this database's own: inside checkpointFolder() or in the folder named
    /// after the run (runFolderName()). Any other recorded file (a path that another database may
    /// share, as before runs had UUIDs) is kept and listed.
    RunDeletion deleteRun(std::int64_t runId);

    /// Moves a run to the trash: it keeps everything (and its id, which no new run takes while the
    /// row exists) but is hidden from runs() until restoreRun() or deleteRun(). `trashPath` is where
    /// the caller moved its checkpoint folder (the desktop trash), "" when it stayed in place.
    /// Throws std::invalid_argument for an unknown run, one in the trash already, or a running one.
    void trashRun(std::int64_t runId, const std::string& trashPath = {});
    /// Takes a run out of the trash. Throws std::invalid_argument when it is unknown or not there.
    void restoreRun(std::int64_t runId);
    /// Creates a run group in status running, owned by this process (its members come later, with
    /// addGroupMember). Throws std::invalid_argument for an empty or repeated member list.
    std::int64_t createGroup(GroupKind kind, const std::string& configJson, const std::vector<std::int64_t>& members);
    /// Takes over a group left by another process (to resume it): status running, owned by this
    /// process. Throws std::runtime_error while another process runs it.
    void reopenGroup(std::int64_t groupId);
    /// Makes run `runId` the group's member `member`. Throws std::invalid_argument when the member is
    /// not in the group's spec or already has a run.
    void addGroupMember(std::int64_t groupId, std::int64_t runId, std::int64_t member);
    /// Sets the group's status (finished time too when it leaves running).
    void setGroupStatus(std::int64_t groupId, RunStatus status);
    /// Every group, newest first.
    std::vector<RunGroupInfo> groups() const;
    std::optional<RunGroupInfo> group(std::int64_t groupId) const;
    /// The runs of a group, in member order.
    std::vector<RunInfo> groupMembers(std::int64_t groupId) const;

    /// The folder beside the database that holds its runs' checkpoints: "<database>.checkpoints".
    std::string checkpointFolder() const;
    /// The folder of one run's checkpoint files inside a checkpoint folder: "run-<id>-<uuid>".
    static std::string runFolderName(const RunInfo& run);

    /// Marks runs left in status running whose owner has gone (run_owner: the
    /// lock its process held is free, whatever became of its process ID) as
    /// interrupted, or as failed with the note the owner left (leaveNote);
    /// returns how many. Call on start.
    int markInterruptedRuns();

    /// Writes why a run ended into space set aside when it started (in its folder
    /// beside the database), for when the database itself cannot take it: a full
    /// disk. markInterruptedRuns() records it later. False when it could not be written.
    bool leaveNote(std::int64_t runId, const std::string& text) noexcept;

private:
    void requireRun(std::int64_t runId) const;
    std::int64_t seriesKey(std::int64_t runId, const std::string& model, const std::string& metric);
    /// Locks the run for this process (run_owner) and sets aside its note.
    void takeOwnership(std::int64_t runId);
    std::filesystem::path notePath(std::int64_t runId) const;
    void reserveNote(std::int64_t runId);
    void dropNote(std::int64_t runId);
    Database& m_database;
    std::map<std::int64_t, std::filesystem::path> m_notes; ///< runs this store set a note aside for
    struct KeyCache {
        std::int64_t runId = 0;
        std::vector<std::pair<std::string, std::int64_t>> ids; ///< "model\tmetric" -> metric_series id
    } m_cache;
};

} // namespace foxhunt
