"""A mount whose data must outlive the container: a named volume is never deleted by `destroy`."""

from __future__ import annotations

import pulumi
import pulumi_docker as docker

from vllm_serving.render.docker_container import Mount

# What terraform-provider-docker's volume Read stores from the existing volume (internal/provider/
# resource_docker_volume.go `resourceDockerVolumeRead`; both ForceNew, not Computed).
ADOPTED_AS_IS = ("labels", "driverOpts")


class RetainedVolume(pulumi.ComponentResource):
    """Registers a named Docker volume with `retain_on_delete`; a bind mount registers nothing.

    Docker's `volume create` with an existing name adopts it, so a volume already filled with
    weights is taken over, not emptied. `destroy` only forgets it.
    """

    mount: Mount
    volume_name: pulumi.Output[str] | None

    def __init__(
        self, type_token: str, name: str, mount: Mount, protect: bool,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(type_token, name, None, opts)
        self.mount = mount
        self.volume_name = None
        if mount.kind == "volume":
            volume = docker.Volume(
                name,
                name=mount.source,
                opts=pulumi.ResourceOptions(
                    parent=self, retain_on_delete=True, protect=protect,
                    # Docker adopts an existing volume unchanged (a Compose project's labels, an NFS
                    # volume's driver options) and the provider reads both back; both force a
                    # replacement and neither is computed, so without this every `pulumi up`
                    # would replace the volume, and fail on a protected one. The stack sets neither.
                    ignore_changes=list(ADOPTED_AS_IS),
                ),
            )
            self.volume_name = volume.name
        self.register_outputs({"source": mount.source, "target": mount.target})

    def container_volume(self) -> docker.ContainerVolumeArgs:
        """The container's view of this mount; depends on the volume resource when there is one."""
        m = self.mount
        if self.volume_name is not None:
            return docker.ContainerVolumeArgs(
                volume_name=self.volume_name, container_path=m.target, read_only=m.read_only
            )
        return docker.ContainerVolumeArgs(
            host_path=m.source, container_path=m.target, read_only=m.read_only
        )
