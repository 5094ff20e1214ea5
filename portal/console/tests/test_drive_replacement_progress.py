"""A drive replacement's job follows the array's reconstruction: its progress on the job page
and in the API grows with the percentage the array reports, instead of standing at two steps of
three (67 %) for the whole reconstruction.

The array answers as SANtricity's SMcli does (the simulator's renders the same lines); the
playbook that carries its commands to a server is the one thing replaced (the rack-wide walk of
a real replacement is test_console_on_the_virtual_rack and the operator's-hour browser test)."""

from __future__ import annotations

import pytest

from portal.console.choices import ReplacementState
from portal.console.models import DriveReplacement
from portal.console.services import Author, drives
from portal.inventory.choices import DriveState
from portal.inventory.models import Drive
from portal.jobs.choices import JobState
from portal.jobs.models import Job
from portal.jobs.worker import run_job
from provisioning.runner import PlaybookResult

pytestmark = pytest.mark.django_db


class ReconstructingArray:
    """ssu01-a with a new drive in a failed one's slot; each `show volumeGroup` after the
    reconstruction started finds it further on, as ``percentages`` say, then optimal. At each
    of those answers it notes what the job's page shows at that moment."""

    def __init__(self, client, address: str, group: str, percentages: list[int]) -> None:
        self.client = client
        self.address = address
        self.group = group
        self.percentages = list(percentages)
        self.started = False
        self.job_id: int | None = None
        self.seen: list[tuple[int, str]] = []  # (job progress from the API, the job's page)

    def _group(self) -> str:
        if not self.started:
            return f"VOLUME GROUP {self.group}\n   Status:              Degraded\n"
        if self.job_id is not None:
            api = self.client.get(f"/api/v1/jobs/{self.job_id}/").json()
            page = self.client.get(f"/jobs/{self.job_id}/progress/").content.decode()
            self.seen.append((api["progress_percent"], page))
        if not self.percentages:
            return f"VOLUME GROUP {self.group}\n   Status:              Optimal\n"
        percent = self.percentages.pop(0)
        return (
            f"VOLUME GROUP {self.group}\n   Status:              Degraded\n"
            f"   Operation:           Reconstruction ({percent}% complete)\n"
        )

    def run_playbook(self, playbook, inventory, extravars=None, **_options):
        script = extravars["ostara_drive"]["script"]
        host = extravars["ostara_drive"]["host"]
        answer = ""
        if "reconstruct;" in script:
            self.started = True
        elif script.startswith("show volumeGroup"):
            answer = self._group()
        elif script.startswith("show drive"):
            answer = (
                f"      Drive at Tray {self.address}\n"
                "         Status:                   Replaced\n"
                f"         Associated volume group:  {self.group}\n"
                "         Locate:                   On\n"
            )
        return PlaybookResult(playbook, "successful", 0, facts={host: {"array_output": answer}})


def test_the_replacement_job_follows_the_arrays_reconstruction(
    client, world, rack_inventory, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.OSTARA_DRIVE_POLL_SECONDS = 0
    drive = Drive.objects.filter(enclosure__array__name="ssu01-a", volume_group__isnull=False)[0]
    Drive.objects.filter(pk=drive.pk).update(state=DriveState.FAILED)
    drive.refresh_from_db()
    address = drives.address_of(drive)
    operator = Author(world["operator"])
    with django_capture_on_commit_callbacks():
        locate = drives.start_locate(drive, operator, confirmed=True)
    Job.objects.filter(pk=locate.pk).update(state=JobState.SUCCEEDED)
    DriveReplacement.objects.filter(job=locate).update(state=ReplacementState.LOCATING)
    with django_capture_on_commit_callbacks():  # not handed to a worker: the test runs it
        job = drives.start_replacement(drive, operator, confirmed=True)

    array = ReconstructingArray(client, address, drive.volume_group.name, [0, 30, 30, 60, 90])
    array.job_id = job.pk
    monkeypatch.setattr("portal.console.services.run_playbook", array.run_playbook)
    client.login(username="viewer", password="pw-viewer-123!")
    run_job(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED, job.error

    # Two steps of three were done when the watch began; the third moves as the array does:
    # what the page showed after the array said 0, 30, 30, 60 and 90 % (and then optimal).
    progress = [api for api, _page in array.seen]
    assert progress == [67, 67, 77, 77, 87, 97], progress
    _api, page = array.seen[3]  # the array has said 30 % (twice)
    assert 'id="job-progressbar" max="100" value="77"' in page
    assert '<span id="job-percent">77 %</span>' in page
    now = page[page.index('id="job-now"') :]
    assert now.startswith(
        'id="job-now">Now: <strong>Follow the array until the volume group is optimal</strong>'
        ': <span id="job-step-percent">30 %</span> of this step'
    )
    watch = job.steps.get(name="watch")
    assert watch.progress == 90
    assert f"{drive.volume_group.name}: reconstruction 90% complete" in watch.log
    api = client.get(f"/api/v1/jobs/{job.pk}/").json()
    assert api["progress_percent"] == 100
    assert [step["progress"] for step in api["steps"]] == [None, None, 90]
