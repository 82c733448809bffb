# the rotation function's name, on the emulator and on AWS alike (<printed ID>: the logical ID --keep prints)
aws cloudformation list-stack-resources --stack-name CdkTsSample \
    --query "StackResourceSummaries[?LogicalResourceId=='<printed ID>'].PhysicalResourceId" --output text
