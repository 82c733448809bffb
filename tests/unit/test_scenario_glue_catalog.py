"""The scenario creates the stack's Glue resources in the emulator from the template, as CloudFormation would."""

from __future__ import annotations

import json

import boto3

from examples.compaction_step import create_glue_catalog

ACCOUNT = "123456789012"
TEMPLATE = {
    "Resources": {
        "Archive": {"Type": "AWS::S3::Bucket"},
        "Database": {"Type": "AWS::Glue::Database", "Properties": {
            "CatalogId": {"Ref": "AWS::AccountId"}, "DatabaseInput": {"Name": "archive_db"}}},
        "Table": {"Type": "AWS::Glue::Table", "DependsOn": ["Database"], "Properties": {
            "CatalogId": {"Ref": "AWS::AccountId"},
            "DatabaseName": "archive_db",
            "TableInput": {
                "Name": "changes", "TableType": "EXTERNAL_TABLE",
                "PartitionKeys": [{"Name": "dt", "Type": "string"}],
                "StorageDescriptor": {
                    "Columns": [{"Name": "eventid", "Type": "string"}],
                    "Location": {"Fn::Join": ["", ["s3://", {"Ref": "Archive"}, "/cdc/"]]},
                },
            },
        }},
    },
}


def test_glue_resources_are_created_with_refs_resolved_and_existing_ones_left_alone(aws):
    cloudformation = boto3.client("cloudformation", region_name="us-east-1")
    cloudformation.create_stack(StackName="Sample", TemplateBody=json.dumps(
        {"Resources": {"Archive": {"Type": "AWS::S3::Bucket"}}}))
    (bucket,) = [r["PhysicalResourceId"] for r in cloudformation.list_stack_resources(
        StackName="Sample")["StackResourceSummaries"]]
    glue = boto3.client("glue", region_name="us-east-1")

    created = create_glue_catalog(glue, cloudformation, TEMPLATE, "Sample", ACCOUNT)

    assert created == ["archive_db", "archive_db.changes"]
    table = glue.get_table(DatabaseName="archive_db", Name="changes")["Table"]
    assert table["StorageDescriptor"]["Location"] == f"s3://{bucket}/cdc/"
    assert [k["Name"] for k in table["PartitionKeys"]] == ["dt"]
    glue.update_table(DatabaseName="archive_db", TableInput={**{k: table[k] for k in (
        "Name", "TableType", "PartitionKeys", "StorageDescriptor")}, "Description": "changed since"})
    assert create_glue_catalog(glue, cloudformation, TEMPLATE, "Sample", ACCOUNT) == []
    assert glue.get_table(DatabaseName="archive_db", Name="changes")["Table"]["Description"] == "changed since"
